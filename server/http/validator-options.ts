// express-openapi-validator's settings for openapi.yaml, in a module of their
// own: the app uses them, and the bench's framework ceiling
// (bench/targets/framework.ts) runs the validator with exactly these.
import type { OpenApiValidatorOpts, SecurityHandlers } from "express-openapi-validator/dist/framework/types.js";
import type { Config } from "../config/config.js";
import { CONTRACT, OPERATION_METHODS, type OpenApiDocument } from "../contract.js";

export function validatorOptions(config: Pick<Config, "validateResponses">, handlers: SecurityHandlers): OpenApiValidatorOpts {
  return {
    // The contract as contract.ts already parsed it (the validator works on its
    // own copy), rather than its path: the file is not read and parsed twice.
    apiSpec: validatorContract(CONTRACT, config.validateResponses) as unknown as OpenApiValidatorOpts["apiSpec"],
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

/**
 * The contract as the validator is given it: without what it never reads.
 * express-openapi-validator clones and dereferences the document it is
 * given, then puts the whole of its `paths` and `components` into the schema
 * of every operation it compiles and walks all of it each time. Most of that
 * is the responses, inlined into every operation by dereferencing; at start
 * the walks cost more than the request validators they build
 * (docs/performance.md).
 * - `webhooks` always go: they are events the service sends, not requests
 *   it receives, and the validator ignores them.
 * - Unless responses are validated too, so do every operation's `responses`
 *   and the components only responses use (`responses`, `headers`). OpenAPI
 *   3.1 makes an operation's `responses` optional.
 * Everything a request is checked against stays as it is: paths and their
 * parameters, request bodies, security, schemas, and the operations' own
 * fields (`x-required-acl`, read by auth.ts from the matched operation).
 * `document` itself is not changed, but the result shares its objects: it
 * is for the validator, which works on a deep copy of what it is given.
 */
export function validatorContract(document: OpenApiDocument, validateResponses: boolean): OpenApiDocument {
  const { webhooks: _webhooks, ...rest } = document;
  if (validateResponses) return rest;
  const { responses: _responses, headers: _headers, ...components } = (document.components ?? {}) as Record<string, unknown>;
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [route, item] of Object.entries((document.paths ?? {}) as Record<string, Record<string, unknown>>)) {
    paths[route] = Object.fromEntries(
      Object.entries(item).map(([key, value]) => {
        if (!OPERATION_METHODS.includes(key)) return [key, value];
        const { responses: _ignored, ...operation } = value as Record<string, unknown>;
        return [key, operation];
      }),
    );
  }
  return { ...rest, paths, components };
}
