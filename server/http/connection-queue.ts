import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { RequestHandler } from "express";

/** One connection's requests: whether one is being handled, and those waiting behind it. */
interface Queue {
  /** The request being handled, or null. */
  current: IncomingMessage | null;
  waiting: (() => void)[];
  /** Set by a parse error behind the request in flight: the connection ends once it is answered. */
  endWhenIdle: boolean;
}

const queues = new WeakMap<Duplex, Queue>();

/**
 * The requests of one connection are handled one after the other. Node
 * hands a client's pipelined requests over as they arrive, each answered in
 * order but handled at once: a GET sent right behind a pause read the agent
 * before the pause. A connection without pipelining never waits here.
 */
export const oneRequestAtATime: RequestHandler = (req, res, next) => {
  let queue = queues.get(req.socket);
  if (queue === undefined) {
    queue = { current: null, waiting: [], endWhenIdle: false };
    queues.set(req.socket, queue);
  }
  const own = queue;
  const start = () => {
    own.current = req;
    next();
  };
  res.once("close", () => {
    own.current = null;
    const following = own.waiting.shift();
    if (following !== undefined) return following();
    if (own.endWhenIdle) req.socket.end();
  });
  if (own.current !== null || own.waiting.length > 0) {
    own.waiting.push(start);
    return;
  }
  start();
};

/**
 * For a parse error on `socket` (parser-errors.ts): true when a request of
 * it, read whole, is still being handled, which then gets its own answer,
 * after which the connection ends. False when there is none, or when the
 * error is in the body of the one being handled: the error is its answer. The error's answer would otherwise be read as that
 * request's: a pause that was made, answered 400. Requests read whole
 * before the error, waiting behind it, are answered too.
 */
export function endAfterRequestInFlight(socket: Duplex): boolean {
  const queue = queues.get(socket);
  if (queue === undefined || queue.current === null || !queue.current.complete) return false;
  queue.endWhenIdle = true;
  return true;
}
