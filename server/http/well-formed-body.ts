import { isUtf8 } from "node:buffer";
import type { IncomingMessage } from "node:http";
import type { RequestHandler } from "express";
import { firstIllFormed } from "../well-formed-json.js";
import { HttpProblem } from "./errors.js";

/** Set on a request whose body's bytes are not UTF-8 (bodyBytesChecked). */
const NOT_UTF8 = Symbol("agentd.body-not-utf8");

/**
 * The JSON body parser's `verify`: marks a body whose bytes are not UTF-8,
 * which the parser would otherwise decode with U+FFFD in their place and
 * store so (a reason "stored as sent" that was not). Throwing here would
 * make the parser answer 403; wellFormedBody answers 400 instead.
 */
export function bodyBytesChecked(req: IncomingMessage, _res: unknown, bytes: Buffer, encoding: string): void {
  if (encoding === "utf-8" && !isUtf8(bytes)) (req as unknown as Record<symbol, boolean>)[NOT_UTF8] = true;
}

/** The 400 of a request whose body bodyBytesChecked found not UTF-8, or null. */
export function bodyNotUtf8(req: IncomingMessage): HttpProblem | null {
  if ((req as unknown as Record<symbol, boolean>)[NOT_UTF8] !== true) return null;
  return new HttpProblem(400, "invalid request", [{ location: "body", path: "", message: "must be UTF-8 (the body holds bytes that are not)" }]);
}

/**
 * A body that is not UTF-8, or holds a lone surrogate
 * (server/well-formed-json.ts), is refused before the contract is checked,
 * so such a string is never stored.
 */
export const wellFormedBody: RequestHandler = (req, _res, next) => {
  const notUtf8 = bodyNotUtf8(req);
  if (notUtf8 !== null) return next(notUtf8);
  const at = firstIllFormed(req.body);
  if (at === null) return next();
  next(new HttpProblem(400, "invalid request", [{ location: "body", path: at, message: "must be well-formed Unicode (no lone surrogate)" }]));
};
