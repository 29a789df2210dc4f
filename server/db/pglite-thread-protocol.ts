// The messages between the main thread (threaded-pglite.ts) and the embedded
// database's thread (pglite-thread.ts). Each request gets one reply with its id.
import { describeFailure } from "../failure.js";

export type ThreadRequest =
  /** The first request, and only once: opens the database (null: in memory). */
  | { id: number; op: "open"; dataDir: string | null }
  | { id: number; op: "query"; tx: number | null; text: string; params: readonly unknown[] }
  | { id: number; op: "copyIn"; tx: number | null; table: string; columns: readonly string[]; text: string }
  /** Begins a transaction; the reply's value is its number, for the requests inside it. */
  | { id: number; op: "begin" }
  /** Commits or rolls back a transaction; the reply comes once it has. */
  | { id: number; op: "end"; tx: number; commit: boolean }
  | { id: number; op: "close" };

/**
 * An Error as it crosses threads: its name, message, stack (the thread's) and
 * own fields (PostgreSQL's code, detail…), and its cause, crossing as well.
 */
export interface ThreadError {
  name: string;
  message: string;
  stack?: string;
  fields: Record<string, unknown>;
  cause?: ThreadError;
}

export type ThreadReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: ThreadError };

/**
 * An Error as it can be posted: the structured clone would keep its message
 * only. Anything else thrown (PGlite's file system layer throws plain
 * objects) crosses with its fields and a readable message.
 */
export function toThreadError(err: unknown, depth = 0): ThreadError {
  const fields: Record<string, unknown> = {};
  if (err !== null && typeof err === "object") {
    for (const [key, value] of Object.entries(err)) {
      if (!["name", "message", "stack", "cause"].includes(key) && cloneable(value)) fields[key] = value;
    }
  }
  if (!(err instanceof Error)) {
    const name = (err as { name?: unknown } | null)?.name;
    return { name: typeof name === "string" ? name : "Error", message: describeFailure(err), fields };
  }
  return {
    name: err.name,
    message: err.message,
    ...(err.stack === undefined ? {} : { stack: err.stack }),
    fields,
    // A few causes deep, so that a cycle of causes cannot loop.
    ...(err.cause === undefined || depth >= 4 ? {} : { cause: toThreadError(err.cause, depth + 1) }),
  };
}

/** Whether postMessage can carry `value` (a function or a symbol cannot). */
function cloneable(value: unknown): boolean {
  try {
    structuredClone(value);
    return true;
  } catch {
    return false;
  }
}

/** The thread's error as an Error again, with its fields: what a store catches is what PGlite threw. */
export function fromThreadError(error: ThreadError): Error {
  const err = new Error(error.message, error.cause === undefined ? undefined : { cause: fromThreadError(error.cause) });
  Object.assign(err, error.fields, { name: error.name });
  // Where it was thrown, in the thread: this side's stack would only show the message's arrival.
  if (error.stack !== undefined) err.stack = error.stack;
  return err;
}
