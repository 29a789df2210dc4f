import type { ErrorRequestHandler, RequestHandler } from "express";
import type { Logger } from "pino";
import { DatabaseUnavailableError } from "../db/sql.js";
import { requestId } from "./logging.js";
import { ERROR_IDS, HttpProblem, authFailure, type ErrorBody, type ErrorDetail } from "./problems.js";

/** Where express-openapi-validator says a problem is (`.params.agent_id`, `.body.reason`, …). */
const LOCATIONS: Readonly<Record<string, ErrorDetail["location"]>> = {
  params: "path",
  query: "query",
  headers: "header",
  body: "body",
};

interface ValidatorErrorItem {
  path?: string;
  message?: string;
}

function toDetail(item: ValidatorErrorItem): ErrorDetail {
  // The validator names places as `/params/agent_id`, `/body/reason`, `/query/x`.
  const match = /^[./]?(params|query|headers|body)(?:[./](.*))?$/.exec(item.path ?? "");
  if (!match) {
    // Not one part of the request but the URL path itself, which the
    // validator could not percent-decode (`/agents/by-id/%FF`): blame the path, not a body.
    const message = item.message === "malformed uri'" ? "is not a valid percent-encoded path" : (item.message ?? "is invalid");
    return { location: "path", path: item.path ?? "", message };
  }
  const location = LOCATIONS[match[1]!] ?? "body";
  const rest = match[2] ?? "";
  // Body places become JSON pointers ("" is the whole body); parameters and headers keep their names.
  const path = location === "body" ? (rest === "" ? "" : "/" + rest.replaceAll(".", "/")) : rest;
  return { location, path, message: item.message ?? "is invalid" };
}

/**
 * The response headers the validator attaches to its errors, e.g. `Allow` on a
 * 405, which RFC 9110 requires. Only string values are kept.
 */
function validatorHeaders(err: unknown): Record<string, string> | undefined {
  const headers = (err as { headers?: unknown })?.headers;
  if (headers === null || typeof headers !== "object") return undefined;
  const kept = Object.entries(headers).filter((entry): entry is [string, string] => typeof entry[1] === "string");
  return kept.length > 0 ? Object.fromEntries(kept) : undefined;
}

/** Turns whatever was thrown into a status and the contract's `Error` body. */
export function toProblem(err: unknown): HttpProblem {
  if (err instanceof HttpProblem) return err;
  if (err instanceof DatabaseUnavailableError) return new HttpProblem(503, "database unavailable");

  const e = err as { status?: unknown; statusCode?: unknown; type?: unknown; errors?: unknown };
  const status = typeof e?.status === "number" ? e.status : typeof e?.statusCode === "number" ? e.statusCode : 500;

  // body-parser's own errors, before the validator sees the request.
  switch (e?.type) {
    case "entity.too.large":
      return new HttpProblem(413, ERROR_IDS[413]!);
    case "entity.parse.failed":
      return new HttpProblem(400, ERROR_IDS[400]!, [{ location: "body", path: "", message: "is not valid JSON" }]);
    case "charset.unsupported":
    case "encoding.unsupported":
      return new HttpProblem(415, ERROR_IDS[415]!);
    case "request.aborted":
    case "request.size.invalid":
    case "stream.encoding.set":
    case "stream.not.readable":
      return new HttpProblem(400, ERROR_IDS[400]!);
  }

  if (status >= 400 && status < 500) {
    const id = ERROR_IDS[status] ?? ERROR_IDS[400]!;
    const items = Array.isArray(e.errors) ? (e.errors as ValidatorErrorItem[]) : [];
    const details = status === 400 && items.length > 0 ? items.map(toDetail) : undefined;
    return new HttpProblem(status in ERROR_IDS ? status : 400, id, details, validatorHeaders(err));
  }
  return new HttpProblem(500, ERROR_IDS[500]!);
}

/** The last middleware: every error leaves in the contract's shape; a 500 is logged, never explained. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, _req, res, _next) => {
    const problem = authFailure(res) ?? toProblem(err);
    if (problem.status >= 500) {
      logger.error({ reqId: requestId(res), err }, problem.error);
    }
    if (res.headersSent) {
      // Too late for a clean answer: cut the connection rather than send half a body.
      res.destroy();
      return;
    }
    const body: ErrorBody = problem.details ? { error: problem.error, details: problem.details } : { error: problem.error };
    res.status(problem.status);
    if (problem.headers) res.set(problem.headers);
    res.json(body);
  };
}

/** Routes outside the contract's base path. */
export const notFound: RequestHandler = (_req, _res, next) => {
  next(new HttpProblem(404, ERROR_IDS[404]!));
};
