// express-openapi-validator's settings for openapi.yaml, in a module of their
// own: the app uses them, and the bench's framework ceiling
// (bench/targets/framework.ts) runs the validator with exactly these.
import type { OpenApiValidatorOpts, SecurityHandlers } from "express-openapi-validator/dist/framework/types.js";
import type { Config } from "../config/config.js";
import { CONTRACT_PATH } from "../contract.js";

export function validatorOptions(config: Pick<Config, "validateResponses">, handlers: SecurityHandlers): OpenApiValidatorOpts {
  return {
    apiSpec: CONTRACT_PATH,
    // Parameters are always coerced from strings; bodies never are: `{"reason": 42}` is a 400.
    validateRequests: { allowUnknownQueryParameters: false, coerceTypes: false },
    validateResponses: config.validateResponses ? { removeAdditional: false } : false,
    validateSecurity: { handlers },
    validateFormats: true,
    ajvFormats: { mode: "full" },
    ignoreUndocumented: false,
    // Resolved parameters, so strictIntegerPathParams can read their schemas.
    $refParser: { mode: "dereference" },
  };
}
