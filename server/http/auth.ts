import type { Request, Response } from "express";
import type { OpenApiRequest, OpenAPIV3, SecurityHandlers } from "express-openapi-validator/dist/framework/types.js";
import { fillAcl } from "../auth/acl.js";
import type { Logger } from "pino";
import type { TokenVerifier } from "../auth/verifier.js";
import { NO_METRICS, type AuthCheckResult, type Metrics } from "../ops/metrics.js";
import { HttpProblem, logServerFailure, recordAuthFailure, toProblem } from "./errors.js";

const STATUS = {
  "invalid token or unauthorized": 401,
  "insufficient permissions": 403,
  "authentication server unreachable": 503,
  "too many requests": 429,
} as const;

const CHECK_RESULT = {
  "invalid token or unauthorized": "unknown_token",
  "insufficient permissions": "denied",
  "authentication server unreachable": "unavailable",
  "too many requests": "throttled",
} as const satisfies Record<keyof typeof STATUS, AuthCheckResult>;

/**
 * The contract's `token` scheme, checked by express-openapi-validator before
 * the request itself is validated. The ACL comes from the operation's
 * `x-required-acl` in openapi.yaml, with the request's path values filled in.
 */
export function securityHandlers(
  verifier: TokenVerifier,
  logger: Logger,
  metrics: Metrics = NO_METRICS,
  /** Told of every token found valid (the rate limit then counts it by token, not by client). */
  onValid: (token: string) => void = () => undefined,
): SecurityHandlers {
  return {
    token: async (req: Request) => {
      const res = req.res as Response;
      const token = req.get("x-auth-token");
      // The validator itself refuses a missing or empty header (401) before calling this.
      if (!token) return false;
      const { openapi } = req as OpenApiRequest;
      const operation = openapi?.schema;
      const template = operation && "x-required-acl" in operation ? operation["x-required-acl"] : undefined;
      if (typeof template !== "string") {
        throw new Error(`operation ${req.method} ${req.path} has no x-required-acl`);
      }
      const pathParams = aclValues(operation, openapi?.pathParams ?? {});
      try {
        const verdict = await verifier.verify(token, fillAcl(template, pathParams));
        metrics.authCheck(verdict.ok ? "allowed" : CHECK_RESULT[verdict.error]);
        if (verdict.ok) {
          onValid(token);
          if (verdict.tokenId !== undefined) res.locals.tokenId = verdict.tokenId;
          return true;
        }
        const retryAfter = "retryAfterSeconds" in verdict ? { "Retry-After": String(verdict.retryAfterSeconds) } : undefined;
        recordAuthFailure(res, new HttpProblem(STATUS[verdict.error], verdict.error, undefined, retryAfter));
      } catch (err) {
        // The validator would call any throw a 401; a verifier that cannot
        // reach its database is a 503, and a bug is a 500.
        metrics.authCheck("unavailable");
        const problem = toProblem(err);
        recordAuthFailure(res, problem);
        // The one log line of this failure: errorHandler does not repeat it.
        logServerFailure(logger, res, problem.status, err, "token check failed");
      }
      return false;
    },
  };
}

/**
 * The path values as the ACL names them. An integer parameter names the
 * number the request reaches, not its spelling: `/agents/by-id/01` reads
 * agent 1, so it needs agent 1's ACL. The check runs before the validator
 * has coerced anything; a value that is not plain digits is left as it is
 * (it is refused with 400 after the check, or with 403 by it).
 */
function aclValues(operation: OpenAPIV3.OperationObject | undefined, raw: Readonly<Record<string, string>>): Record<string, string> {
  const values = { ...raw };
  for (const parameter of (operation?.parameters ?? []) as OpenAPIV3.ParameterObject[]) {
    const schema = parameter.schema as OpenAPIV3.SchemaObject | undefined;
    const value = values[parameter.name];
    if (parameter.in === "path" && schema?.type === "integer" && value !== undefined && /^[0-9]+$/.test(value)) {
      values[parameter.name] = value.replace(/^0+(?=[0-9])/, "");
    }
  }
  return values;
}
