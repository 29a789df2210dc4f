import type { Response } from "express";
import type { components } from "../../generated/openapi.js";

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

export function authFailure(res: Response): HttpProblem | undefined {
  const failure: unknown = res.locals[AUTH_FAILURE];
  return failure instanceof HttpProblem ? failure : undefined;
}
