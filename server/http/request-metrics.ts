import type { RequestHandler } from "express";
import type { OpenApiRequest } from "express-openapi-validator/dist/framework/types.js";
import type { Metrics } from "../ops/metrics.js";

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
      const operationId = (req as OpenApiRequest).openapi?.schema?.operationId;
      const operation = typeof operationId === "string" ? operationId : "unknown";
      metrics.httpRequest(operation, res.statusCode, (performance.now() - started) / 1000);
    });
    next();
  };
}
