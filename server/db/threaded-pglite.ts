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
import { fromThreadError, type ThreadError, type ThreadReply, type ThreadRequest } from "./pglite-thread-protocol.js";

/** A request without its id (which `call` gives it), for each kind of request. */
type RequestBody = ThreadRequest extends infer R ? (R extends ThreadRequest ? Omit<R, "id"> : never) : never;

/** An answer the thread owes. */
interface Pending {
  resolve(value: unknown): void;
  reject(err: unknown): void;
  /** A statement of a transaction, or its end: PGlite runs it while the transaction holds its lock. */
  inTransaction: boolean;
}

/** The embedded database's thread, started ahead of opening: it loads PGlite meanwhile. */
export interface PgliteThread {
  /**
   * Opens the database in `<dataDir>/pgdata` (null: in memory) as openPglite
   * does (the same settings and failures), behind the same Sql interface.
   * Once only: the thread serves one database.
   */
  open(dataDir: string | null): Promise<Database>;
  /**
   * Resolves with the reason if the thread can no longer serve, other than
   * by `close`: PostgreSQL stopped after a PANIC (a write-ahead log write
   * that failed: a full disk), it owed answers for the stall time-out
   * without giving any, or the thread itself failed. Every call
   * then fails with DatabaseUnavailableError, and only a new process can
   * open the data directory again (it recovers it as after a crash).
   */
  readonly stopped: Promise<Error>;
}

/** A full disk is a 503, to repeat later, as on PostgreSQL (outOfResources); any other error is PGlite's own. */
function asCallerSees(err: Error): Error {
  return outOfResources(err) ? new DatabaseUnavailableError(`database unavailable: ${err.message}`, { cause: err }) : err;
}

/**
 * PostgreSQL's verdict that it cannot go on (it would restart its backends):
 * PGlite answers the statement with the error, then never returns from the
 * next one, spinning in its WASM. (In a COMMIT it may spin at once, with no
 * answer: the stall time-out's case.)
 */
function panicked(error: ThreadError): boolean {
  return error.fields.severity === "PANIC";
}

/** AGENTD_DB_STALL_TIMEOUT's default, for a thread started without one (tests). */
const STALL_TIMEOUT_MS = 120_000;

/**
 * Starts the thread, or takes over one `spawnPgliteWorker` started earlier
 * (in the same tick: its events are heard from here on); nothing is opened
 * until `open`. An idle thread never keeps the process alive.
 *
 * PGlite cannot interrupt a statement: a thread that owes answers and gives
 * none for `stallTimeoutMs` is taken for stuck (a write to its log that
 * failed for want of space leaves it busy for good) and stopped, as after a
 * PANIC. A long statement cannot be told from a stuck one: the bound must
 * exceed the longest. The time a transaction's caller takes between its
 * statements is its own, not the thread's.
 */
export function startPgliteThread(worker: Worker = spawnPgliteWorker(), { stallTimeoutMs = STALL_TIMEOUT_MS } = {}): PgliteThread {
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let gone: Error | null = null;
  let closing = false;
  let stop!: (reason: Error) => void;
  const stopped = new Promise<Error>((resolve) => (stop = resolve));
  /** Whether the thread answered anything since the watchdog's last tick. */
  let answered = false;
  /** The watchdog's ticks in a row with answers owed and none given. */
  let quietTicks = 0;
  /** Transactions begun and not yet ended: the caller holds PGlite's lock between their statements. */
  let openTransactions = 0;

  const settle = (id: number, outcome: (entry: Pending) => void): void => {
    const entry = pending.get(id);
    if (entry === undefined) return;
    pending.delete(id);
    if (pending.size === 0) worker.unref();
    outcome(entry);
  };
  const lost = (err: Error): void => {
    if (gone === null) {
      gone = err;
      clearInterval(watchdog);
      if (!closing) stop(err);
    }
    for (const id of [...pending.keys()]) settle(id, (entry) => entry.reject(gone));
  };
  /** The thread will answer nothing more: its calls fail now, and it is ended whatever it is doing. */
  const giveUp = (err: Error): void => {
    lost(err);
    void worker.terminate();
  };
  // Started once open: opening (a first start's initdb, a recovery) is not
  // a statement, and has no bound but its own end. Counted in ticks, not
  // read off the clock: a process frozen meanwhile (SIGSTOP, a suspended
  // VM) or a clock that jumps loses the thread one tick, not its life. A
  // tick that began with nothing owed counts as part of the time, hence one
  // tick more than the time-out's.
  let watchdog: NodeJS.Timeout | undefined;
  const watch = (): void => {
    const tickMs = Math.min(1000, stallTimeoutMs);
    const ticksToGiveUp = Math.ceil(stallTimeoutMs / tickMs) + 1;
    watchdog = setInterval(() => {
      if (pending.size === 0 || answered || waitingForCaller()) {
        answered = false;
        quietTicks = 0;
      } else if (++quietTicks >= ticksToGiveUp) {
        giveUp(new DatabaseUnavailableError(`the embedded database has not answered for ${stallTimeoutMs} ms, and is taken for stuck (AGENTD_DB_STALL_TIMEOUT)`));
      }
    }, tickMs);
    watchdog.unref();
  };
  /**
   * A transaction is open and none of its statements is owed: whatever
   * waits, waits for the caller to go on with it. So a transaction's
   * function must await only its own `tx` (as every store's does): one that
   * waits on a statement outside it waits on itself, and nothing ends that.
   */
  const waitingForCaller = (): boolean => openTransactions > 0 && ![...pending.values()].some((entry) => entry.inTransaction);
  worker.on("message", (message: ThreadReply) => {
    answered = true;
    if (!message.ok && panicked(message.error)) {
      // Its statement may still have been applied (a commit whose record was
      // written before the write that failed), as after PostgreSQL's own PANIC.
      giveUp(new DatabaseUnavailableError(`the embedded database stopped: PANIC: ${message.error.message}`, { cause: fromThreadError(message.error) }));
      return;
    }
    settle(message.id, (entry) => (message.ok ? entry.resolve(message.value) : entry.reject(asCallerSees(fromThreadError(message.error)))));
  });
  worker.on("error", (err) => lost(new DatabaseUnavailableError(`the embedded database's thread failed: ${err.message}`, { cause: err })));
  worker.on("exit", () => lost(new DatabaseUnavailableError("the embedded database is closed")));

  const call = (body: RequestBody): Promise<unknown> =>
    new Promise((resolve, reject) => {
      if (gone !== null) return reject(gone);
      const id = nextId++;
      pending.set(id, { resolve, reject, inTransaction: body.op === "end" || ("tx" in body && body.tx !== null) });
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
    openTransactions++;
    try {
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
    } finally {
      openTransactions--;
    }
  }

  return {
    stopped,
    async open(dataDir) {
      try {
        await call({ op: "open", dataDir });
      } catch (err) {
        // The caller has the reason: a start that failed, not a database that stopped.
        closing = true;
        await worker.terminate();
        throw err;
      }
      watch();
      const base = sqlIn(null);
      return {
        kind: "pglite",
        query: base.query.bind(base),
        transaction,
        // openPglite's own copyIn, in the thread, keeps its COPYs one transaction.
        copyIn: base.copyIn.bind(base),
        async close() {
          closing = true;
          if (gone === null) await call({ op: "close" });
          await worker.terminate();
        },
      };
    },
  };
}
