// The contract's `Error` answers: HttpProblem (a status and the Error body),
// how anything thrown on the way becomes one, and the last middleware that
// sends it.
import type { ErrorRequestHandler, RequestHandler, Response } from "express";
import type { Logger } from "pino";
import type { components } from "../../generated/openapi.js";
import { DatabaseUnavailableError } from "../db/sql.js";
import { describeFailure } from "../failure.js";
import { pointerSegment } from "../json-pointer.js";
import { requestId } from "./logging.js";
import { TOKEN_CHALLENGE } from "./response-headers.js";

export type ErrorBody = components["schemas"]["Error"];
export type ErrorDetail = components["schemas"]["ErrorDetail"];

/**
 * An error that leaves as the contract's `Error` body with this status.
 * Anything else that reaches the error handler is a bug and leaves as 500.
 */
export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly details?: ErrorDetail[],
    /** Extra response headers, e.g. Retry-After on 429. */
    readonly headers?: Readonly<Record<string, string>>,
  ) {
    super(error);
    this.name = "HttpProblem";
  }

  /** The contract's `Error` body of this problem. */
  body(): ErrorBody {
    return this.details ? { error: this.error, details: this.details } : { error: this.error };
  }
}

/** The stable identifier clients see for each status we produce. */
export const ERROR_IDS: Readonly<Record<number, string>> = {
  400: "invalid request",
  401: "invalid token or unauthorized",
  403: "insufficient permissions",
  404: "not found",
  405: "method not allowed",
  406: "not acceptable",
  409: "conflict",
  413: "payload too large",
  415: "unsupported media type",
  429: "too many requests",
  500: "server error",
  503: "service unavailable",
};

/** Where the token check leaves its verdict for the error handler. */
const AUTH_FAILURE = "authFailure";

/**
 * express-openapi-validator reports every failed security check as its own
 * 401 (or 500); the verdict recorded here says which contract error it was.
 */
export function recordAuthFailure(res: Response, problem: HttpProblem): void {
  res.locals[AUTH_FAILURE] = problem;
}

function authFailure(res: Response): HttpProblem | undefined {
  const failure: unknown = res.locals[AUTH_FAILURE];
  return failure instanceof HttpProblem ? failure : undefined;
}

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
  /** `<Ajv keyword>.openapi.validation`, e.g. additionalProperties.openapi.validation. */
  errorCode?: string;
}

function toDetail(item: ValidatorErrorItem, body: unknown): ErrorDetail {
  // A body's field named "" ({"": 1}): the validator's path for it is empty.
  if (item.path === "" && item.errorCode?.startsWith("additionalProperties.") === true) {
    return { location: "body", path: "/", message: item.message ?? "is invalid" };
  }
  // The validator names places as `/params/agent_id`, `/body/reason`, `/query/x`.
  const match = /^[./]?(params|query|headers|body)(?:[./](.*))?$/.exec(item.path ?? "");
  if (!match) {
    // Not one part of the request but the URL path itself, which the
    // validator could not percent-decode (`/agents/by-id/%FF`): blame the
    // path as a whole (""), as a body that does not parse is blamed, not a
    // body field, and not the URL, which the validator names with the base
    // path the client may not have used (the stateful mock's service).
    if (item.message === "malformed uri'") return { location: "path", path: "", message: "is not a valid percent-encoded path" };
    return { location: "path", path: item.path ?? "", message: item.message ?? "is invalid" };
  }
  const location = LOCATIONS[match[1]!] ?? "body";
  const rest = match[2] ?? "";
  // Body places are JSON pointers already ("" is the whole body), except
  // that the validator appends an unknown field's name as sent, unescaped:
  // a field of the body itself is found by that name and escaped ("a/b" is
  // /a~1b). Parameters and headers keep their names.
  if (location !== "body") return { location, path: rest, message: item.message ?? "is invalid" };
  const topLevel =
    item.errorCode?.startsWith("additionalProperties.") === true && typeof body === "object" && body !== null && !Array.isArray(body) && Object.hasOwn(body, rest);
  const path = rest === "" ? "" : "/" + (topLevel ? pointerSegment(rest) : rest);
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

/**
 * Whether body-parser's refused text is JSON all the same: its strict mode
 * refuses a body that is valid JSON but neither an object nor an array
 * (`null`, `"lunch"`, `0`), and every request body of the contract is an object.
 */
function isJson(text: unknown): boolean {
  if (typeof text !== "string") return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Turns whatever was thrown into a status and the contract's `Error` body. */
/** `body`: the request's parsed body, to name its fields in the details. */
export function toProblem(err: unknown, body?: unknown): HttpProblem {
  if (err instanceof HttpProblem) return err;
  if (err instanceof DatabaseUnavailableError) return new HttpProblem(503, "database unavailable");

  const e = err as { status?: unknown; statusCode?: unknown; type?: unknown; errors?: unknown };
  const status = typeof e?.status === "number" ? e.status : typeof e?.statusCode === "number" ? e.statusCode : 500;

  // body-parser's own errors, before the validator sees the request.
  switch (e?.type) {
    case "entity.too.large":
      return new HttpProblem(413, ERROR_IDS[413]!);
    case "entity.parse.failed":
      return new HttpProblem(400, ERROR_IDS[400]!, [{ location: "body", path: "", message: isJson((err as { body?: unknown }).body) ? "must be object" : "is not valid JSON" }]);
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
    const details = status === 400 && items.length > 0 ? items.map((item) => toDetail(item, body)) : undefined;
    return new HttpProblem(status in ERROR_IDS ? status : 400, id, details, validatorHeaders(err));
  }
  return new HttpProblem(500, ERROR_IDS[500]!);
}

/**
 * The one log line of a failure the server answers 5xx to. An outage (503:
 * the database or the auth service away) is expected and logged once per
 * request while it lasts: a warning with its cause, no stack. Anything else
 * is a bug: an error with its stack.
 */
export function logServerFailure(logger: Logger, res: Response, status: number, err: unknown, message: string): void {
  if (status === 503) logger.warn({ reqId: requestId(res), cause: describeFailure(err) }, message);
  else if (status >= 500) logger.error({ reqId: requestId(res), err }, message);
}

/** The last middleware: every error leaves in the contract's shape; a 500 is logged, never explained. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const recorded = authFailure(res);
    const problem = recorded ?? toProblem(err, req.body);
    // A failed token check was logged where its cause is known (the verifier,
    // the token check): `err` is then only the validator's own 401 carrying it.
    if (recorded === undefined) logServerFailure(logger, res, problem.status, err, problem.error);
    if (res.headersSent) {
      // Answered already, whole (a chunked body's early 413, unread-body.ts):
      // nothing to add. Otherwise too late for a clean answer: cut the
      // connection rather than send half a body.
      if (!res.writableEnded) res.destroy();
      return;
    }
    res.status(problem.status);
    if (problem.status === 401) res.set(TOKEN_CHALLENGE);
    if (problem.headers) res.set(problem.headers);
    res.json(problem.body());
  };
}

/** Routes outside the contract's base path. */
export const notFound: RequestHandler = (_req, _res, next) => {
  next(new HttpProblem(404, ERROR_IDS[404]!));
};
