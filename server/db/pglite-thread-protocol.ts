// The messages between the main thread (threaded-pglite.ts) and the embedded
// database's thread (pglite-thread.ts). Each request gets one reply with its id.

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

/** An Error as it crosses threads: its name, message and own fields (PostgreSQL's code, detail…). */
export interface ThreadError {
  name: string;
  message: string;
  fields: Record<string, unknown>;
}

export type ThreadReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: ThreadError };

/** An Error as it can be posted: the structured clone would keep its message only. */
export function toThreadError(err: unknown): ThreadError {
  if (!(err instanceof Error)) return { name: "Error", message: String(err), fields: {} };
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(err)) {
    if (key !== "name" && key !== "message" && key !== "stack" && cloneable(value)) fields[key] = value;
  }
  return { name: err.name, message: err.message, fields };
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
  return Object.assign(new Error(error.message), error.fields, { name: error.name });
}
