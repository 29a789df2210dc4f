import type { IncomingMessage } from "node:http";
import cors from "cors";
import type { RequestHandler } from "express";

/** A browser's CORS preflight: an OPTIONS that names the method it asks for. */
export function isPreflight(req: IncomingMessage): boolean {
  return req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined;
}

/**
 * CORS for the origins of AGENTD_CORS_ORIGINS. Only a preflight is answered
 * here: any other OPTIONS goes on to the contract, which has no such
 * operation (405 with Allow, or 404), rather than getting an empty 204.
 */
export function corsFor(origins: readonly string[]): RequestHandler {
  const handler = cors({
    origin: origins.includes("*") ? "*" : [...origins],
    // The API's methods, not the cors package's default list (PUT, PATCH, DELETE…).
    methods: ["GET", "POST"],
    // Upstream's two, and the request id the contract lets a client choose.
    allowedHeaders: ["Content-Type", "X-Auth-Token", "X-Request-Id"],
    // What a page may read of an answer: a 429's wait, the id to quote in a
    // report, and a 401's challenge.
    exposedHeaders: ["Retry-After", "X-Request-Id", "WWW-Authenticate"],
    maxAge: 600,
  });
  return (req, res, next) => {
    if (req.method === "OPTIONS" && !isPreflight(req)) next();
    else handler(req, res, next);
  };
}
