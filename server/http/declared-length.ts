import type { IncomingMessage, ServerResponse } from "node:http";
import type { Server } from "node:https";
import type { RequestHandler } from "express";
import { ERROR_IDS, HttpProblem } from "./errors.js";

/** Whether the request's Content-Length already says its body is over the limit. */
function declaredTooLarge(req: IncomingMessage, limitBytes: number): boolean {
  const length = req.headers["content-length"];
  return length !== undefined && Number(length) > limitBytes;
}

/**
 * A body whose Content-Length is over the limit is answered 413 at once.
 * The body parser refuses it too, but only after reading all of it: tens
 * of megabytes read before the answer, or no answer until the request
 * time-out when the client never sends them. The body is still read off
 * behind the answer (Node discards what a finished response left unread):
 * a client that sends it without waiting would otherwise meet a closed
 * connection while writing, and never read the 413. Only a client that
 * waits for 100 Continue, and so sends nothing, has its connection closed.
 */
export function refuseDeclaredTooLarge(limitBytes: number): RequestHandler {
  return (req, res, next) => {
    if (!declaredTooLarge(req, limitBytes)) return next();
    if (req.headers.expect?.toLowerCase() === "100-continue") res.setHeader("Connection", "close");
    next(new HttpProblem(413, ERROR_IDS[413]!));
  };
}

/**
 * Requests with an Expect header. `100-continue`: the client waits for a
 * 100 before it sends the body, which Node would send to every such
 * request; a body over the limit gets its 413 instead, unread. Any other
 * expectation is ignored, as RFC 9110 allows: Node would answer 417, a
 * status no operation has, without the contract's body or headers.
 */
export function handleExpectations(server: Server, limitBytes: number): void {
  const dispatch = (req: IncomingMessage, res: ServerResponse) => server.emit("request", req, res);
  server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => {
    if (!declaredTooLarge(req, limitBytes)) res.writeContinue();
    dispatch(req, res);
  });
  server.on("checkExpectation", dispatch);
}
