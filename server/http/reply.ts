import type { ServerResponse } from "node:http";
import type { Response } from "express";
import type { operations } from "../../generated/openapi.js";
import type { OperationId } from "../../generated/operations.js";

type Responses<O extends OperationId> = operations[O]["responses"];
type JsonBody<R> = R extends { content: { "application/json": infer B } } ? B : never;

/**
 * Serialised bodies, by object. The stores hand out the same immutable
 * objects until the data changes (then new ones), so each agent and each
 * list is serialised once, not on every request. Kept as bytes: a string
 * would be encoded again for every response, and a large list runs to
 * megabytes.
 */
const serialised = new WeakMap<object, Buffer>();

/**
 * Sends a response the contract allows for this operation and status, and
 * nothing else: a body of the wrong shape, or a status the operation does not
 * document, fails to compile.
 */
export function reply<O extends OperationId, S extends keyof Responses<O> & number>(
  res: Response,
  _operation: O,
  status: S,
  ...body: JsonBody<Responses<O>[S]> extends never ? [] : [JsonBody<Responses<O>[S]>]
): void {
  res.status(status);
  const payload = body[0];
  if (payload === undefined) {
    res.end();
  } else if (res.app.locals.validateResponses || typeof payload !== "object" || payload === null) {
    // express-openapi-validator checks responses inside res.json: keep it in the path.
    res.json(payload);
  } else {
    let bytes = serialised.get(payload);
    if (bytes === undefined) {
      bytes = Buffer.from(JSON.stringify(payload), "utf8");
      serialised.set(payload, bytes);
    }
    // The header res.json would send.
    res.set("Content-Type", "application/json; charset=utf-8");
    if (bytes.length <= PIECE_BYTES) res.send(bytes);
    else sendInPieces(res, bytes);
  }
}

/** The most of a body written at once (sendInPieces). */
const PIECE_BYTES = 64 * 1024;

/** Answers being written in pieces (sendInPieces). */
const inPieces = new WeakSet<ServerResponse>();

/**
 * Whether `res` is written in pieces: the idle time-out passing while it is
 * in progress then means the kernel has taken none of it for that long, the
 * client reading nothing (connection-limits.ts).
 */
export function writtenInPieces(res: ServerResponse): boolean {
  return inPieces.has(res);
}

/**
 * A large body (the list of a large fleet) goes in pieces, each written once
 * the one before has reached the kernel. Each piece the kernel takes resets
 * the connection's idle timer, so a client that reads keeps its connection,
 * and one that reads nothing is cut off after AGENTD_IDLE_TIMEOUT
 * (connection-limits.ts): one write of the whole body completes only once
 * all of it has reached the kernel, and would make any client slower than
 * that look like one that reads nothing. The kernel still takes a stalled
 * socket's data in bursts of half its send buffer, so a client that reads
 * less than that in an idle time-out is cut off too. (With response
 * validation on, the validator's res.json writes the body at once: such an
 * answer is never cut off.)
 */
function sendInPieces(res: Response, bytes: Buffer): void {
  res.set("Content-Length", String(bytes.length));
  inPieces.add(res);
  let at = 0;
  const more = (): void => {
    while (at < bytes.length) {
      const piece = bytes.subarray(at, at + PIECE_BYTES);
      at += piece.length;
      if (at >= bytes.length) {
        res.end(piece);
        return;
      }
      if (!res.write(piece)) {
        res.once("drain", more);
        return;
      }
    }
  };
  more();
}
