// Bounds on the API's connections, so that clients who connect and then say
// nothing, or stop reading, cannot hold the process's file descriptors: a
// connection with no request in progress, or whose answer the client has
// read nothing of, is closed after the idle time-out, and past a cap a new
// connection is closed at once (never queued).
import { readFileSync } from "node:fs";
import type { Server } from "node:https";
import type { Socket } from "node:net";
import { answerInProgress, connectionBusy } from "./connection-queue.js";
import { writtenInPieces } from "./reply.js";

/**
 * Descriptors kept out of the API's reach for everything else the process
 * holds: the database's files (PGlite's are capped by max_files_per_process,
 * db/pglite.ts) or its pool, the auth service's pool (auth/external.ts), the
 * relay's sockets (a pool per webhook receiver, bounded by the relay's
 * concurrency, and the bus), the log, the admin and operator listeners, and
 * Node's own.
 */
export const RESERVED_FILES = 256;

/** Between keep-alive requests: a client that wants another answer soon asks soon. */
const KEEP_ALIVE_MS = 5_000;

export class ConnectionLimitError extends Error {
  override readonly name = "ConnectionLimitError";
}

/**
 * The process's soft limit on open files, from /proc/self/limits (Node has
 * no getrlimit); null where that cannot be read, or is unlimited. Node
 * raises it to the hard limit at start, so it is `ulimit -Hn`'s, not
 * `ulimit -n`'s.
 */
export function openFileLimit(limitsText: () => string = () => readFileSync("/proc/self/limits", "utf8")): number | null {
  let text: string;
  try {
    text = limitsText();
  } catch {
    return null;
  }
  const soft = /^Max open files\s+(\S+)/m.exec(text)?.[1];
  return soft !== undefined && /^\d+$/.test(soft) ? Number(soft) : null;
}

/** The cap to apply: the configured one, or what the open-file limit allows; throws if it leaves too little. */
export function connectionCap(configured: number | null, fileLimit: number | null): number {
  if (fileLimit === null) return configured ?? Infinity;
  const room = fileLimit - RESERVED_FILES;
  if (configured === null) {
    if (room < 1) {
      throw new ConnectionLimitError(
        `the open-file limit (ulimit -Hn: Node raises the process's to the hard one) is ${fileLimit}: at least ${RESERVED_FILES + 1} are needed, ${RESERVED_FILES} of them kept for the database and the relay`,
      );
    }
    return room;
  }
  if (configured > room) {
    throw new ConnectionLimitError(
      `AGENTD_MAX_CONNECTIONS=${configured} would leave fewer than ${RESERVED_FILES} of the process's ${fileLimit} open files (ulimit -Hn: Node raises the process's limit to the hard one) for the database and the relay: lower it to ${Math.max(room, 0)} at most, or raise the limit`,
    );
  }
  return configured;
}

/** Applies the idle time-out and the cap (connectionCap's) to an API server before it listens. */
export function limitConnections(server: Server, limits: { idleTimeoutMs: number; cap: number }): void {
  if (Number.isFinite(limits.cap)) server.maxConnections = limits.cap;

  // Node arms `server.timeout` on every connection once its handshake is
  // done, and its own keep-alive time-out between requests. Our listener
  // replaces Node's default (destroy on any time-out): a request in
  // progress is left to its own bounds (requestTimeout, the database's).
  server.timeout = limits.idleTimeoutMs;
  server.keepAliveTimeout = Math.min(KEEP_ALIVE_MS, limits.idleTimeoutMs);
  // The app's connection queue knows the requests in progress or waiting
  // their turn. A large answer goes in pieces: one in progress through the
  // whole time-out is one the client has read none of for that long, which
  // would otherwise hold the connection, and the answer's megabytes, for good.
  server.on("timeout", (socket: Socket) => {
    const answer = answerInProgress(socket);
    if (!connectionBusy(socket) || (answer !== null && writtenInPieces(answer))) socket.destroy();
  });
}
