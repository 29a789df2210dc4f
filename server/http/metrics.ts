import type { Request, RequestHandler } from "express";
import type { Metrics } from "../ops/metrics.js";

/** What express-openapi-validator attaches to a request it matched to an operation. */
type MatchedRequest = Request & { openapi?: { schema?: { operationId?: unknown } } };

/**
 * Counts each answered request under its contract operationId. A request that
 * matched no operation (unknown path, wrong method, a parser refusal) counts
 * as "unknown": labels are never built from the raw path, so any number of
 * made-up URLs adds no new series.
 */
export function requestMetrics(metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    res.once("close", () => {
      const operationId = (req as MatchedRequest).openapi?.schema?.operationId;
      const operation = typeof operationId === "string" ? operationId : "unknown";
      metrics.httpRequest(operation, res.statusCode, (performance.now() - started) / 1000);
    });
    next();
  };
}
