import type { IncomingMessage, ServerResponse } from "node:http";
import type { Server } from "node:https";
import { declaredTooLarge } from "./request-hygiene.js";

/**
 * Requests with an Expect header. `100-continue`: the client waits for a
 * 100 before it sends the body, which Node would send to every such
 * request; a body over the limit gets its 413 instead (requestHygiene),
 * unread. Any other expectation is ignored, as RFC 9110 allows: Node would
 * answer 417, a status no operation has, without the contract's body or
 * headers.
 */
export function handleExpectations(server: Server, limitBytes: number): void {
  const dispatch = (req: IncomingMessage, res: ServerResponse) => server.emit("request", req, res);
  server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => {
    if (!declaredTooLarge(req, limitBytes)) res.writeContinue();
    dispatch(req, res);
  });
  server.on("checkExpectation", dispatch);
}
