// The embedded database's own thread: a worker that opens PGlite (openPglite,
// the same settings as everywhere) and runs the statements the main thread
// sends it (threaded-pglite.ts starts it and explains why).
import { parentPort } from "node:worker_threads";
import { openPglite } from "./pglite.js";
import type { Database, Sql } from "./sql.js";
import { toThreadError, type ThreadReply, type ThreadRequest } from "./pglite-thread-protocol.js";

if (parentPort === null) throw new Error("pglite-thread runs as a worker thread (threaded-pglite.ts starts it)");
const port = parentPort;

const reply = (id: number, value: unknown): void => port.postMessage({ id, ok: true, value } satisfies ThreadReply);
const fail = (id: number, err: unknown): void => port.postMessage({ id, ok: false, error: toThreadError(err) } satisfies ThreadReply);

/** An open transaction: its statements' target, and how to end it. */
interface OpenTransaction {
  sql: Sql;
  end(commit: boolean, requestId: number): void;
}

const transactions = new Map<number, OpenTransaction>();
let nextTransaction = 1;
/** What ends a transaction the main thread rolls back: PGlite rolls back on any rejection. */
const ROLLBACK = new Error("rolled back");
let db: Database | null = null;

port.on("message", (request: ThreadRequest) => {
  if (request.op === "open") {
    openPglite(request.dataDir).then(
      (opened) => {
        db = opened;
        reply(request.id, null);
      },
      (err: unknown) => {
        fail(request.id, err);
        // Nothing else to do: closing the port ends the thread.
        port.close();
      },
    );
    return;
  }
  // The main thread sends nothing else before "open" has been answered.
  if (db === null) return fail(request.id, new Error("the embedded database is not open"));
  answer(db, request);
});

function answer(db: Database, request: Exclude<ThreadRequest, { op: "open" }>): void {
  switch (request.op) {
    case "query":
    case "copyIn": {
      const target = request.tx === null ? db : transactions.get(request.tx)?.sql;
      if (target === undefined) return fail(request.id, new Error(`transaction ${String(request.tx)} has ended`));
      const done =
        request.op === "query" ? target.query(request.text, request.params) : target.copyIn(request.table, request.columns, request.text);
      done.then(
        (value) => reply(request.id, value),
        (err: unknown) => fail(request.id, err),
      );
      return;
    }
    case "begin":
      return begin(db, request.id);
    case "end": {
      const open = transactions.get(request.tx);
      if (open === undefined) return fail(request.id, new Error(`transaction ${String(request.tx)} has ended`));
      transactions.delete(request.tx);
      open.end(request.commit, request.id);
      return;
    }
    case "close":
      db.close().then(
        () => {
          reply(request.id, null);
          port.close();
        },
        (err: unknown) => fail(request.id, err),
      );
      return;
  }
}

/**
 * PGlite's transaction() runs a callback and commits when it resolves: the
 * callback here resolves (or rejects, to roll back) when the main thread
 * ends the transaction. PGlite holds its own lock meanwhile, so other
 * statements wait for it as they do in one thread.
 */
function begin(db: Database, requestId: number): void {
  const tx = nextTransaction++;
  let endRequest: number | null = null;
  db.transaction(
    (sql) =>
      new Promise<void>((resolve, reject) => {
        transactions.set(tx, {
          sql,
          end(commit, id) {
            endRequest = id;
            if (commit) resolve();
            else reject(ROLLBACK);
          },
        });
        reply(requestId, tx);
      }),
  ).then(
    () => reply(endRequest!, null),
    (err: unknown) => {
      transactions.delete(tx);
      if (endRequest === null) fail(requestId, err);
      else if (err === ROLLBACK) reply(endRequest, null);
      else fail(endRequest, err);
    },
  );
}
