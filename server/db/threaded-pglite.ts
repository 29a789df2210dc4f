// The embedded database as the server uses it: PGlite in a worker thread of
// its own (pglite-thread.ts), reached through messages. Two reasons:
// - PostgreSQL's WASM does not yield while it works: in the main thread,
//   every statement held up every request, a long one (an import's COPY, a
//   VACUUM) for its whole length. In its own thread, the event loop goes on
//   answering from the stores' caches meanwhile.
// - At start, the thread loads and opens PGlite on another core while the
//   main thread loads the HTTP stack and sets up the validator.
// Each statement costs a message each way; values are copied by the
// structured clone algorithm, which carries what PGlite takes and returns
// (numbers, strings, Dates, Uint8Arrays, plain objects).
import type { Worker } from "node:worker_threads";
import { spawnPgliteWorker } from "./pglite-worker.js";
import { DatabaseUnavailableError, outOfResources, type Database, type Sql } from "./sql.js";
import { fromThreadError, type ThreadReply, type ThreadRequest } from "./pglite-thread-protocol.js";

/** A request without its id (which `call` gives it), for each kind of request. */
type RequestBody = ThreadRequest extends infer R ? (R extends ThreadRequest ? Omit<R, "id"> : never) : never;

/** An answer the thread owes. */
interface Pending {
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/** The embedded database's thread, started ahead of opening: it loads PGlite meanwhile. */
export interface PgliteThread {
  /**
   * Opens the database in `<dataDir>/pgdata` (null: in memory) as openPglite
   * does (the same settings and failures), behind the same Sql interface.
   * Once only: the thread serves one database.
   */
  open(dataDir: string | null): Promise<Database>;
}

/** A full disk is a 503, to repeat later, as on PostgreSQL (outOfResources); any other error is PGlite's own. */
function asCallerSees(err: Error): Error {
  return outOfResources(err) ? new DatabaseUnavailableError(`database unavailable: ${err.message}`, { cause: err }) : err;
}

/**
 * Starts the thread, or takes over one `spawnPgliteWorker` started earlier
 * (in the same tick: its events are heard from here on); nothing is opened
 * until `open`. An idle thread never keeps the process alive.
 */
export function startPgliteThread(worker: Worker = spawnPgliteWorker()): PgliteThread {
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let gone: Error | null = null;

  const settle = (id: number, outcome: (entry: Pending) => void): void => {
    const entry = pending.get(id);
    if (entry === undefined) return;
    pending.delete(id);
    if (pending.size === 0) worker.unref();
    outcome(entry);
  };
  worker.on("message", (message: ThreadReply) =>
    settle(message.id, (entry) => (message.ok ? entry.resolve(message.value) : entry.reject(asCallerSees(fromThreadError(message.error))))),
  );
  const lost = (err: Error): void => {
    gone ??= err;
    for (const id of [...pending.keys()]) settle(id, (entry) => entry.reject(gone));
  };
  worker.on("error", (err) => lost(new DatabaseUnavailableError(`the embedded database's thread failed: ${err.message}`, { cause: err })));
  worker.on("exit", () => lost(new DatabaseUnavailableError("the embedded database is closed")));

  const call = (body: RequestBody): Promise<unknown> =>
    new Promise((resolve, reject) => {
      if (gone !== null) return reject(gone);
      const id = nextId++;
      pending.set(id, { resolve, reject });
      worker.ref();
      try {
        worker.postMessage({ ...body, id });
      } catch (err) {
        // A value the structured clone cannot copy (a function, a symbol): nothing was sent.
        settle(id, (entry) => entry.reject(err));
      }
    });

  const sqlIn = (tx: number | null): Sql => {
    const sql: Sql = {
      query: async <R extends object>(text: string, params: readonly unknown[] = []) => (await call({ op: "query", tx, text, params })) as R[],
      copyIn: async (table, columns, text) => void (await call({ op: "copyIn", tx, table, columns, text })),
      // PGlite has no savepoint-based nesting: a nested call joins the outer transaction.
      transaction: tx === null ? transaction : (fn) => fn(sql),
    };
    return sql;
  };
  async function transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
    const tx = (await call({ op: "begin" })) as number;
    let result: T;
    try {
      result = await fn(sqlIn(tx));
    } catch (err) {
      // The statement's own failure says more than a failed rollback would.
      await call({ op: "end", tx, commit: false }).catch(() => undefined);
      throw err;
    }
    await call({ op: "end", tx, commit: true });
    return result;
  }

  return {
    async open(dataDir) {
      try {
        await call({ op: "open", dataDir });
      } catch (err) {
        await worker.terminate();
        throw err;
      }
      const base = sqlIn(null);
      return {
        kind: "pglite",
        query: base.query.bind(base),
        transaction,
        // openPglite's own copyIn, in the thread, keeps its COPYs one transaction.
        copyIn: base.copyIn.bind(base),
        async close() {
          if (gone === null) await call({ op: "close" });
          await worker.terminate();
        },
      };
    },
  };
}
