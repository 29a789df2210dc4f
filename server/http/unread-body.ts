import type { RequestHandler } from "express";
import { ERROR_IDS } from "./errors.js";
import { hasBody, sentChunked } from "./request-hygiene.js";

/**
 * How long the rest of a body answered before it was read whole may keep
 * arriving: long enough for a client that sends it without waiting to read
 * the answer rather than meet a reset, and far shorter than the request
 * time-out.
 */
const READ_OFF_GRACE_MS = 2000;

/**
 * A request answered before its body was read whole (declared over the
 * limit, not JSON, or sent chunked past the limit): the rest is read off
 * behind the answer (by Node, or by the body parser), so a client still
 * sending reads the answer, and the connection is kept for the next
 * request. Bounded here: a body still arriving
 * after the grace has its connection closed. Unbounded, an endless or
 * trickling body held the connection, and the server's time to decrypt it,
 * until the request time-out, whose own answer (parser-errors.ts) was then
 * a second one to a request already answered.
 */
export const boundReadOff: RequestHandler = (req, res, next) => {
  if (hasBody(req)) {
    res.once("finish", () => {
      if (req.complete) return;
      const timer = setTimeout(() => {
        if (!req.complete) req.socket.destroy();
      }, READ_OFF_GRACE_MS);
      timer.unref();
      const clear = () => {
        clearTimeout(timer);
        req.off("end", clear);
        req.socket.off("close", clear);
      };
      req.once("end", clear);
      req.socket.once("close", clear);
    });
  }
  next();
};

/**
 * A body without a Content-Length (chunked) is answered 413 as soon as the
 * bytes sent pass the limit. The JSON body parser refuses it at the same
 * byte (or earlier, for a compressed body: it counts inflated bytes), but
 * answers only once it has read the rest off (expressjs/body-parser#509):
 * for a body that never ends, never. Counted on the request's own data
 * events, which the body parser, the next middleware, reads in the same
 * turn, so both see every byte.
 */
export function chunkedBodyLimit(limitBytes: number): RequestHandler {
  return (req, res, next) => {
    if (!sentChunked(req)) {
      next();
      return;
    }
    let received = 0;
    const count = (chunk: Buffer) => {
      received += chunk.length;
      if (received <= limitBytes) return;
      req.off("data", count);
      // The body parser's own error comes once the rest is read off (or the
      // connection closed, boundReadOff): the error handler then finds the
      // answer sent and stops there.
      if (!res.headersSent) res.status(413).json({ error: ERROR_IDS[413]! });
    };
    req.on("data", count);
    next();
  };
}
