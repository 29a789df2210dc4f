// express-openapi-validator's settings for openapi.yaml, in a module of their
// own: the app uses them, and the bench's framework ceiling
// (bench/targets/framework.ts) runs the validator with exactly these.
import type { OpenApiValidatorOpts, SecurityHandlers } from "express-openapi-validator/dist/framework/types.js";
import type { Config } from "../config/config.js";
import { CONTRACT } from "../contract.js";

export function validatorOptions(config: Pick<Config, "validateResponses">, handlers: SecurityHandlers): OpenApiValidatorOpts {
  return {
    // The contract as contract.ts already parsed it (the validator works on its
    // own copy), rather than its path: the file is not read and parsed twice.
    apiSpec: CONTRACT as unknown as OpenApiValidatorOpts["apiSpec"],
    // The contract is checked against the OpenAPI schema by `redocly lint`
    // (npm run lint, CI) before it is released; checking it again here
    // would be paid at every start.
    validateApiSpec: false,
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
