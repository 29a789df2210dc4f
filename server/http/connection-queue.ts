import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { RequestHandler } from "express";

/**
 * Requests a connection may have read whole and waiting behind the one in
 * flight. Far more than a client that pipelines sends at once; past it, the
 * requests that follow are dropped unhandled, and the connection ends once
 * those before them are answered (an HTTP/1.1 client sends again what a
 * closed connection left unanswered). Without a bound, a client pipelining
 * without reading its answers would grow the server's memory for as long
 * as it sends (Node stops reading a connection only when its answers pile
 * up, and waiting requests have none yet). Closing the connection at once
 * would lose the answers of requests already handled: a pause made whose
 * 204 never arrives.
 */
export const MAX_WAITING = 32;

/**
 * Requests a connection may have dropped past MAX_WAITING before it is
 * destroyed, answers still owed or not. Node goes on parsing what the client
 * sent before the server stopped reading (over TLS, all it had received),
 * and holds each dropped request until the connection closes. Far more than
 * a burst of small requests in one write (a few hundred) brings, so such a
 * client still gets its answers; a flood is cut off.
 */
export const MAX_DROPPED = 4096;

/** One connection's requests: the one being handled, those waiting behind it. */
interface Queue {
  current: IncomingMessage | null;
  /** The answer of `current`. */
  answer: ServerResponse | null;
  waiting: { req: IncomingMessage; start: () => void }[];
  /** The latest request read from the connection: a parse error is in its body, or after it. */
  last: IncomingMessage | null;
  /** Set by a parse error behind the request in flight, or by one request too many: the connection ends once the requests before it are answered. */
  endWhenIdle: boolean;
  /** Past MAX_WAITING: every later request of the connection is dropped unhandled. */
  overflowed: boolean;
  /** How many were dropped so far. */
  dropped: number;
}

const queues = new WeakMap<Duplex, Queue>();

/**
 * How long a connection the server has ended may stay open on the client's
 * side: long enough to read the last answer. A client that keeps it
 * half-open would otherwise hold it, and a graceful stop would wait for it:
 * Node's closeAllConnections no longer reaches a connection it has handed
 * over (CONNECT), and the idle time-out spares one with a request it never
 * answered (dropped, below).
 */
const END_GRACE_MS = 2000;

/** Ends `socket` after what was written, and destroys it after the grace if the client has not closed its side. */
export function endConnection(socket: Duplex, last?: string): void {
  socket.end(last);
  const timer = setTimeout(() => socket.destroy(), END_GRACE_MS);
  timer.unref();
  socket.once("close", () => clearTimeout(timer));
}

/**
 * The requests of one connection are handled one after the other. Node
 * hands a client's pipelined requests over as they arrive, each answered in
 * order but handled at once: a GET sent right behind a pause read the agent
 * before the pause. A connection without pipelining never waits here.
 */
export const oneRequestAtATime: RequestHandler = (req, res, next) => {
  // Read from a connection already ending (the answer before it closed it,
  // as at a stop): it could not be answered, so it is not handled.
  if (!req.socket.writable) return;
  let queue = queues.get(req.socket);
  if (queue === undefined) {
    queue = { current: null, answer: null, waiting: [], last: null, endWhenIdle: false, overflowed: false, dropped: 0 };
    queues.set(req.socket, queue);
  }
  const own = queue;
  // Dropped: neither handled nor answered, so it changes nothing, and the
  // connection's end tells the client it was not.
  if (own.overflowed || own.waiting.length >= MAX_WAITING) {
    own.overflowed = true;
    own.endWhenIdle = true;
    // Nothing more is read from the client; what it already sent still comes.
    req.socket.pause();
    if (++own.dropped > MAX_DROPPED) req.socket.destroy();
    return;
  }
  own.last = req;
  const start = () => {
    own.current = req;
    own.answer = res;
    next();
  };
  res.once("close", () => {
    if (own.current === req) {
      own.current = null;
      own.answer = null;
    }
    // Not kept for as long as an idle connection lives.
    if (own.last === req && req.complete) own.last = null;
    // The connection is gone (the client left, or it was closed) or going
    // (ended after an answer that closed it, as at a stop): what waits is
    // for nobody, and must change nothing.
    if (!req.socket.writable) {
      own.waiting.length = 0;
      return;
    }
    const following = own.waiting.shift();
    if (following !== undefined) return following.start();
    if (own.endWhenIdle) endConnection(req.socket);
  });
  if (own.current === null && own.waiting.length === 0) return start();
  own.waiting.push({ req, start });
};

/** Whether a request of `socket` is being handled or waits its turn: the idle time-out spares it (connection-limits.ts). */
export function connectionBusy(socket: Duplex): boolean {
  const queue = queues.get(socket);
  return queue !== undefined && (queue.current !== null || queue.waiting.length > 0);
}

/** The answer in progress on `socket`, if any. */
export function answerInProgress(socket: Duplex): ServerResponse | null {
  return queues.get(socket)?.answer ?? null;
}

/**
 * What a parse error on `socket` gets (parser-errors.ts), CONNECT's
 * included:
 * - "answer": its own error answer, then the connection closes. There is
 *   no request in flight, or the error is in the body of the one being
 *   handled, whose answer it is.
 * - "later": nothing now. Requests read whole before it are being handled
 *   or waiting: each gets its own answer, then the connection ends. An
 *   error answer now would be read as the first one's: a pause that was
 *   made, answered 400. A waiting request whose body holds the error is
 *   dropped.
 * - "close": nothing, the connection closes. The error is in the rest of a
 *   body that was already answered (unread-body.ts): a second answer would
 *   be read as the next request's.
 */
export function afterParseError(socket: Duplex): "answer" | "later" | "close" {
  const queue = queues.get(socket);
  if (queue === undefined) return "answer";
  const broken = queue.last !== null && !queue.last.complete ? queue.last : null;
  if (broken !== null && broken === queue.current) return queue.answer?.headersSent === true ? "close" : "answer";
  if (broken !== null) {
    const waitingAt = queue.waiting.findIndex((entry) => entry.req === broken);
    if (waitingAt < 0) return "close";
    queue.waiting.splice(waitingAt, 1);
    // The parser repeats its error on every later read: each is then "later" too.
    queue.last = null;
  }
  if (queue.current === null) return "answer";
  queue.endWhenIdle = true;
  return "later";
}
