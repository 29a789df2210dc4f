import type { RequestHandler } from "express";
import type { OpenApiRequest } from "express-openapi-validator/dist/framework/types.js";
import { operations } from "../../generated/operations.js";
import { BASE_PATH } from "../contract.js";
import type { Metrics } from "../ops/metrics.js";
import { escapeRegExp } from "../escape-regexp.js";
import { onRequestEnd } from "./request-end.js";

/**
 * Counts each request under its contract operationId. A request that
 * matched no operation (unknown path, wrong method) counts as "unknown":
 * labels are never built from the raw path, so any number of made-up URLs
 * adds no new series. One whose connection ended before its answer was
 * sent (the client left, or the server cut it: a 408 written to the
 * socket, a stop's time-out) counts as "aborted", not as the 200 Node's
 * response starts with: slow answers given up on must not read as
 * successes.
 */
export function requestMetrics(metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    onRequestEnd(res, (answered) => {
      const operationId = (req as OpenApiRequest).openapi?.schema?.operationId;
      const operation = typeof operationId === "string" ? operationId : operationOf(req.method, req.originalUrl);
      metrics.httpRequest(operation, answered ? res.statusCode : "aborted", (performance.now() - started) / 1000);
    });
    next();
  };
}

// Each operation's method and path, for the requests answered before the
// validator names their operation: refused by the rate limit or by the body
// parser (malformed JSON, another media type, too large).
const ROUTES = Object.entries(operations).map(([operationId, { method, path }]) => ({
  operationId,
  method: method.toUpperCase(),
  path: new RegExp(`^${escapeRegExp(BASE_PATH)}${path.split(/\{[^}]+\}/).map(escapeRegExp).join("[^/]+")}/?$`),
}));

/** The operation a method and URL name, or "unknown". */
function operationOf(method: string, url: string): string {
  const path = url.split("?", 1)[0]!;
  return ROUTES.find((route) => route.method === method && route.path.test(path))?.operationId ?? "unknown";
}
