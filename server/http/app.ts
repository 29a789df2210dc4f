import express, { type Express } from "express";
import cors from "cors";
import * as OpenApiValidator from "express-openapi-validator";
import type { Logger } from "pino";
import type { Config } from "../config.js";
import type { TokenVerifier } from "../auth/verifier.js";
import type { AgentStore } from "../store/agent-store.js";
import { CONTRACT_PATH, BASE_PATH } from "../contract.js";
import { authFailure, securityHandlers } from "./auth.js";
import { errorHandler, notFound } from "./errors.js";
import { agentRoutes } from "./handlers.js";
import { requestLogger } from "./logging.js";
import { rateLimiter } from "./rate-limit.js";
import { requireJsonBody } from "./content-type.js";
import { ignoreConditionalHeaders, requireHost, strictIntegerPathParams } from "./request-hygiene.js";

export interface AppDeps {
  config: Pick<Config, "validateResponses" | "bodyLimitBytes" | "rateLimit" | "corsOrigins">;
  store: AgentStore;
  verifier: TokenVerifier;
  logger: Logger;
}

/**
 * Builds the whole request path. A request enters through logging, CORS and
 * the rate limit, is checked by express-openapi-validator against
 * openapi.yaml (token and ACL first, then parameters and body), and reaches
 * a handler only when the contract allows it. Every failure on the way leaves
 * through `errorHandler` in the contract's `Error` shape.
 */
export function createApp({ config, store, verifier, logger }: AppDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  // API answers are small and always fresh; ETags would cost a hash per response.
  app.set("etag", false);

  app.use(requestLogger(logger));
  if (config.corsOrigins.length > 0) {
    app.use(
      cors({
        origin: config.corsOrigins.includes("*") ? "*" : config.corsOrigins,
        allowedHeaders: ["Content-Type", "X-Auth-Token"],
        exposedHeaders: ["Retry-After", "X-Request-Id"],
        maxAge: 600,
      }),
    );
  }
  if (config.rateLimit) app.use(rateLimiter(config.rateLimit));

  app.use(requireHost);
  app.use(ignoreConditionalHeaders);
  app.use(requireJsonBody);
  app.use(express.json({ limit: config.bodyLimitBytes, strict: true }));

  app.use(
    OpenApiValidator.middleware({
      apiSpec: CONTRACT_PATH,
      // Parameters are always coerced from strings; bodies never are: `{"reason": 42}` is a 400.
      validateRequests: { allowUnknownQueryParameters: false, coerceTypes: false },
      validateResponses: config.validateResponses ? { removeAdditional: false } : false,
      validateSecurity: { handlers: securityHandlers(verifier) },
      validateFormats: true,
      ajvFormats: { mode: "full" },
      ignoreUndocumented: false,
      // Resolved parameters, so strictIntegerPathParams can read their schemas.
      $refParser: { mode: "dereference" },
    }),
  );
  app.use((err: unknown, _req: express.Request, res: express.Response, next: express.NextFunction) => {
    next(authFailure(res) ?? err);
  });
  app.use(strictIntegerPathParams);

  app.use(BASE_PATH, agentRoutes(store));
  app.use(notFound);
  app.use(errorHandler);
  return app;
}
