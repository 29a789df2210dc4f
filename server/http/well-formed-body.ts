import type { RequestHandler } from "express";
import { firstIllFormed } from "../well-formed-json.js";
import { HttpProblem } from "./errors.js";

/**
 * A body with a lone surrogate (server/well-formed-json.ts) is refused
 * before the contract is checked, so such a string is never stored. (Raw
 * bytes that are not UTF-8 already arrive as U+FFFD from the body parser.)
 */
export const wellFormedBody: RequestHandler = (req, _res, next) => {
  const at = firstIllFormed(req.body);
  if (at === null) return next();
  next(new HttpProblem(400, "invalid request", [{ location: "body", path: at, message: "must be well-formed Unicode (no lone surrogate)" }]));
};
