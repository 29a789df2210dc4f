import type { RequestHandler } from "express";
import { HttpProblem } from "./problems.js";

/**
 * A request that carries a body must say it is JSON. Without this, a body
 * with no or another Content-Type would be silently ignored, and a pause
 * with a reason sent as text would succeed without its reason.
 */
export const requireJsonBody: RequestHandler = (req, _res, next) => {
  const hasBody = req.get("transfer-encoding") !== undefined || Number(req.get("content-length") ?? 0) > 0;
  if (hasBody && !req.is("application/json")) {
    next(new HttpProblem(415, "unsupported media type"));
    return;
  }
  next();
};
