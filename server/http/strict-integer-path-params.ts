import type { RequestHandler } from "express";
import type { OpenApiRequest, OpenAPIV3 } from "express-openapi-validator/dist/framework/types.js";
import { HttpProblem } from "./errors.js";

const INTEGER = /^-?[0-9]+$/;

/**
 * The validator turns path parameters into numbers the way JavaScript does,
 * so `1e3`, `0x10` or ` 1` would pass as integers. A path parameter the
 * contract types as an integer must be written as one: plain digits.
 * Runs after the validator, reading the parameters it matched in openapi.yaml
 * (dereferenced: see validator-options.ts).
 */
export const strictIntegerPathParams: RequestHandler = (req, _res, next) => {
  const { openapi } = req as OpenApiRequest;
  const parameters = (openapi?.schema?.parameters ?? []) as OpenAPIV3.ParameterObject[];
  const raw = openapi?.expressRoute ? rawPathParams(openapi.expressRoute, req.path) : {};
  for (const parameter of parameters) {
    const schema = parameter.schema as OpenAPIV3.SchemaObject | undefined;
    if (parameter.in !== "path" || schema?.type !== "integer") continue;
    const value = raw[parameter.name];
    if (value !== undefined && !INTEGER.test(value)) {
      next(new HttpProblem(400, "invalid request", [{ location: "path", path: parameter.name, message: "must be integer" }]));
      return;
    }
  }
  next();
};

/**
 * The path values as the client wrote them (percent-decoded), by name: the
 * validator has already replaced `req.params` with coerced values.
 */
function rawPathParams(expressRoute: string, requestPath: string): Record<string, string> {
  const names = expressRoute.split("/");
  const values = requestPath.split("/");
  const raw: Record<string, string> = {};
  names.forEach((segment, i) => {
    const value = values[i];
    if (segment.startsWith(":") && value !== undefined) {
      try {
        raw[segment.slice(1)] = decodeURIComponent(value);
      } catch {
        raw[segment.slice(1)] = value;
      }
    }
  });
  return raw;
}
