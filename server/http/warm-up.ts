// The app's warm-up: one request per operation and request body of the
// contract, sent through the app in this process before the server listens.
//
// express-openapi-validator sets itself up on the requests it sees: the
// first one waits for the contract's routes and compiles the security and
// request-validation middlewares, and the first request to each operation
// (per content type) compiles that operation's validators. Without the
// warm-up, the first clients pay all of it.
//
// A warm-up request carries a mark no HTTP request can carry (a symbol
// property, set here on the request object). The app lets it through the
// token check without a token (passWarmUp), keeps it out of the log, the
// metrics and the rate limit (skipOnWarmUp), and answers it right after the
// checks (stopWarmUp): it never reaches a handler or the store.
import type { Express, Request, RequestHandler } from "express";
import type { SecurityHandlers } from "express-openapi-validator/dist/framework/types.js";
import { inject } from "light-my-request";
import { OPERATION_METHODS, type OpenApiDocument } from "../contract.js";

const WARM_UP = Symbol("agentd.warm-up");

function isWarmUp(req: Request): boolean {
  return (req as unknown as Record<symbol, unknown>)[WARM_UP] === true;
}

/** `handler`, except that a warm-up request goes straight on. */
export function skipOnWarmUp(handler: RequestHandler): RequestHandler {
  return (req, res, next) => (isWarmUp(req) ? next() : handler(req, res, next));
}

/** The security handlers, except that a warm-up request passes them without a token. */
export function passWarmUp(handlers: SecurityHandlers): SecurityHandlers {
  const passing: SecurityHandlers = {};
  for (const [name, handler] of Object.entries(handlers)) {
    passing[name] = (req, scopes, schema) => (isWarmUp(req) ? true : handler(req, scopes, schema));
  }
  return passing;
}

/** Answers a warm-up request that passed every check, before any handler: 204, no body. */
export const stopWarmUp: RequestHandler = (req, res, next) => {
  if (isWarmUp(req)) res.status(204).end();
  else next();
};

interface Parameter {
  in?: string;
  name?: string;
  example?: unknown;
}

interface Operation {
  parameters?: (Parameter | { $ref: string })[];
  requestBody?: { required?: boolean; content?: Record<string, unknown> };
}

/** `node`, or what its local `$ref` (`#/components/...`) points to in `document`. */
function resolved<T>(document: OpenApiDocument, node: T | { $ref: string }): T {
  if (node === null || typeof node !== "object" || !("$ref" in node) || typeof node.$ref !== "string" || !node.$ref.startsWith("#/")) return node as T;
  let target: unknown = document;
  for (const key of node.$ref.slice(2).split("/")) target = (target as Record<string, unknown> | undefined)?.[key.replaceAll("~1", "/").replaceAll("~0", "~")];
  return resolved(document, target as T);
}

/** A path parameter's example as the path carries it; "1" when the contract gives none. */
function exampleText(example: unknown): string {
  return typeof example === "string" || typeof example === "number" ? String(example) : "1";
}

/** One request per operation of `document` and way of sending its body (none, or each media type). */
function warmUpRequests(document: OpenApiDocument, basePath: string): { method: string; url: string; contentType: string | null }[] {
  const requests: { method: string; url: string; contentType: string | null }[] = [];
  for (const [template, item] of Object.entries((document.paths ?? {}) as Record<string, Record<string, Operation>>)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!OPERATION_METHODS.includes(method)) continue;
      // Each path parameter gets its example from the contract, so the request is valid and goes through every check.
      const parameters = (operation.parameters ?? []).map((parameter) => resolved(document, parameter));
      const examples = new Map(parameters.filter((p) => p?.in === "path").map((p) => [p.name, p.example]));
      const url = basePath + template.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(exampleText(examples.get(name))));
      const contentTypes = Object.keys(operation.requestBody?.content ?? {});
      const bodies: (string | null)[] = operation.requestBody?.required ? contentTypes : [null, ...contentTypes];
      for (const contentType of bodies) requests.push({ method: method.toUpperCase(), url, contentType });
    }
  }
  return requests;
}

/**
 * Sends the warm-up requests through `app`; throws when one is not answered
 * 204 by stopWarmUp (a request the checks refused would not have set up
 * everything an ordinary request needs).
 */
export async function warmUp(app: Express, document: OpenApiDocument, basePath: string): Promise<void> {
  for (const { method, url, contentType } of warmUpRequests(document, basePath)) {
    const response = await inject(
      // A function, never the app itself: given an Express app (which has
      // `request`), light-my-request sets Express's shared request prototype
      // to inherit from its own, for every app in the process, and real
      // requests then crash on a client's disconnect.
      (req, res) => {
        (req as unknown as Record<symbol, unknown>)[WARM_UP] = true;
        app(req as never, res as never);
      },
      {
        method: method as never,
        url,
        // The validator refuses a missing token header before any security handler runs.
        headers: { "x-auth-token": "warm-up", ...(contentType === null ? {} : { "content-type": contentType }) },
        ...(contentType === null ? {} : { payload: "{}" }),
      },
    );
    if (response.statusCode !== 204) {
      throw new Error(`warm-up request ${method} ${url}${contentType === null ? "" : ` (${contentType})`} answered ${response.statusCode}: ${response.body.slice(0, 300)}`);
    }
  }
}
