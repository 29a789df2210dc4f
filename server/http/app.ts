import express, { type Express, type RequestHandler } from "express";
import * as OpenApiValidator from "express-openapi-validator";
import type { Logger } from "pino";
import type { Config } from "../config/config.js";
import type { TokenVerifier } from "../auth/verifier.js";
import type { AgentOperations } from "../store/agent-store.js";
import { BASE_PATH } from "../contract.js";
import { securityHandlers } from "./auth.js";
import { errorHandler, notFound } from "./errors.js";
import { agentRoutes } from "./agent-routes.js";
import { requestLogger } from "./logging.js";
import { requestMetrics } from "./request-metrics.js";
import { NO_METRICS, type Metrics } from "../ops/metrics.js";
import { rateLimits } from "./rate-limit.js";
import { requestHygiene } from "./request-hygiene.js";
import { apiHeaders, responseHeaders } from "./response-headers.js";
import { strictIntegerPathParams } from "./strict-integer-path-params.js";
import { boundReadOff, chunkedBodyLimit } from "./unread-body.js";
import { corsFor } from "./cors.js";
import { oneRequestAtATime } from "./connection-queue.js";
import { validatorOptions } from "./validator-options.js";
import { passWarmUp, skipOnWarmUp, stopWarmUp } from "./warm-up.js";
import { bodyBytesChecked, wellFormedBody } from "./well-formed-body.js";

export interface AppDeps {
  config: Pick<Config, "validateResponses" | "bodyLimitBytes" | "rateLimit" | "corsOrigins" | "tlsCert">;
  store: AgentOperations;
  verifier: TokenVerifier;
  logger: Logger;
  /** Request, auth and rate-limit counters; NO_METRICS (the default) counts nothing and costs nothing. */
  metrics?: Metrics;
  /**
   * Run once the contract has accepted a request, before its handler: the
   * stateful mock hands a forced answer back to Prism there
   * (mock/upstream.ts). None in a deployment.
   */
  beforeHandlers?: RequestHandler;
}

/**
 * Builds the whole request path, in this order. A request enters, after
 * the one before it on its connection (pipelined) is answered, through
 * the headers every answer carries, logging, metrics, CORS and the rate
 * limit (a body answered before it is read whole is read off for a bounded
 * time only); passes the request hygiene checks, the JSON body parser (a
 * chunked body stopped at the limit) and the well-formed Unicode check; is
 * checked by express-openapi-validator against openapi.yaml (token and
 * ACL first, then parameters and body), and after it by
 * strictIntegerPathParams; and reaches a handler only when the contract
 * allows it. Every failure on the way leaves through `errorHandler`
 * in the contract's `Error` shape. The warm-up requests of warm-up.ts (sent
 * in process before the server listens) skip the log, the metrics, the rate
 * limit and the token check, and stop before the handlers.
 */
export function createApp({ config, store, verifier, logger, metrics = NO_METRICS, beforeHandlers }: AppDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  // API answers are small and always fresh; ETags would cost a hash per response.
  app.set("etag", false);
  // Paths are matched as the contract writes them, as upstream does: `/1.0/AGENTS` is not an operation.
  app.set("case sensitive routing", true);
  // reply() must leave bodies to res.json while the validator checks responses.
  app.locals.validateResponses = config.validateResponses;

  app.use(skipOnWarmUp(oneRequestAtATime));
  app.use(apiHeaders(responseHeaders(config)));
  app.use(skipOnWarmUp(boundReadOff));
  app.use(skipOnWarmUp(requestLogger(logger)));
  if (metrics !== NO_METRICS) app.use(skipOnWarmUp(requestMetrics(metrics)));
  if (config.corsOrigins.length > 0) app.use(corsFor(config.corsOrigins));
  const limits = config.rateLimit ? rateLimits(config.rateLimit, () => metrics.rateLimited()) : null;
  if (limits) app.use(skipOnWarmUp(limits.middleware));

  app.use(requestHygiene(config.bodyLimitBytes));
  // Just before the body parser: both must see the body's first byte.
  app.use(chunkedBodyLimit(config.bodyLimitBytes));
  app.use(express.json({ limit: config.bodyLimitBytes, strict: true, verify: bodyBytesChecked }));
  app.use(wellFormedBody);

  app.use(
    OpenApiValidator.middleware(
      validatorOptions(config, passWarmUp(securityHandlers(verifier, logger, metrics, (token) => limits?.verified(token)))),
    ),
  );
  app.use(strictIntegerPathParams);
  app.use(stopWarmUp);
  if (beforeHandlers) app.use(beforeHandlers);

  app.use(BASE_PATH, agentRoutes(store));
  app.use(notFound);
  app.use(errorHandler(logger));
  return app;
}
