// The embedded database: PGlite (PostgreSQL compiled to WASM) persisted in
// `<dataDir>/pgdata`, so `npm start` needs no database server.
//
// Durability: PGlite mounts the directory with Emscripten's NODEFS, whose
// writes are synchronous write(2) calls. PostgreSQL writes the WAL of a
// transaction before COMMIT returns, so once a query's promise resolves its
// effect is in the kernel and survives the process being killed (kill -9);
// the next open replays the WAL. PGlite runs PostgreSQL with fsync off and
// NODEFS has no fsync, so an OS crash or power cut can still lose the last
// writes: deployments that need that guarantee use PostgreSQL.
// `relaxedDurability` stays false (it would let a query resolve before its
// writes are flushed, which matters for the non-NODEFS file systems).
//
// PGlite is single-connection and single-process: it serialises queries and
// transactions itself, and two processes must never open one data directory
// (the serve command and the admin CLI see to that).
import { constants } from "node:fs";
import { access } from "node:fs/promises";
import { PGlite, type Transaction } from "@electric-sql/pglite";
import { PathFailure, systemDescription } from "../failure.js";
import { makePrivateDir } from "../private-dir.js";
import type { Database, Sql } from "./sql.js";
import { pgdataDir } from "./pgdata.js";

type Queryable = Pick<Transaction, "query">;

function sqlOver(target: Queryable, transaction: Sql["transaction"]): Sql {
  return {
    async query<R extends object>(text: string, params: readonly unknown[] = []): Promise<R[]> {
      const result = await target.query<R>(text, [...params]);
      return result.rows;
    },
    transaction,
    // PGlite has no client stream: COPY reads the rows from the virtual
    // file /dev/blob, which PGlite fills from the `blob` option.
    //
    // PostgreSQL's WASM runs in this thread and does not yield while it
    // works, so one large COPY would hold up every request of a serving
    // process for its whole length. The rows go in COPYs of at most
    // COPY_ROWS, in the same transaction, with a turn of the event loop
    // between them. In COPY's text format a newline inside a value is
    // written as `\n`, so the text can be cut after any newline.
    async copyIn(table, columns, text) {
      const statement = `COPY ${table} (${columns.join(", ")}) FROM '/dev/blob'`;
      for (let start = 0; start < text.length; ) {
        if (start > 0) await new Promise((resolve) => setImmediate(resolve));
        const end = afterRows(text, start, COPY_ROWS);
        await target.query(statement, [], { blob: new Blob([text.slice(start, end)]) });
        start = end;
      }
    },
  };
}

const COPY_ROWS = 10_000;

/** Where the `rows` lines of `text` that start at `start` end (or its end). */
function afterRows(text: string, start: number, rows: number): number {
  let at = start;
  for (let row = 0; row < rows && at < text.length; row++) {
    const newline = text.indexOf("\n", at);
    at = newline === -1 ? text.length : newline + 1;
  }
  return at;
}

/**
 * As PostgreSQL's own checkpoint_timeout. PGlite runs PostgreSQL as one
 * backend, with no checkpointer process and so no checkpoint until it
 * closes: its write-ahead log, which a checkpoint lets it recycle, would
 * otherwise grow with every write for as long as a server runs.
 */
const CHECKPOINT_EVERY_MS = 5 * 60_000;

/**
 * Opens (creating it on first use) the embedded database in
 * `<dataDir>/pgdata`; with `dataDir` null, a new database held in memory
 * only, gone when it is closed (the stateful mock's). It checkpoints every
 * `checkpointEveryMs`.
 */
export async function openPglite(dataDir: string | null, { checkpointEveryMs = CHECKPOINT_EVERY_MS } = {}): Promise<Database> {
  const pgdata = dataDir === null ? undefined : pgdataDir(dataDir);
  let pg: PGlite;
  try {
    if (pgdata !== undefined) {
      makePrivateDir(pgdata);
      // Asked here, where the system names the problem: PGlite, which reaches
      // its files through its own file system layer, reports a read-only or
      // unreachable folder as a bare errno number.
      await access(pgdata, constants.R_OK | constants.W_OK | constants.X_OK);
    }
    pg = await PGlite.create({
      ...(pgdata === undefined ? {} : { dataDir: pgdata }),
      relaxedDurability: false,
      // PostgreSQL's default 128 MB of shared buffers would sit in this
      // process's memory for a table of agents and one of tokens. Each file
      // PostgreSQL keeps open is one of this process's descriptors, which the
      // API's connections share: PostgreSQL's least (it closes the least
      // recently used beyond it) keeps the database's share small and known.
      postgresqlconf: ["shared_buffers = 16MB", "max_files_per_process = 64"],
    });
  } catch (err) {
    throw new PathFailure("open the embedded database in", pgdata ?? "memory", explainedOpenFailure(fromWasiErrno(err)));
  }

  const transaction = <T>(fn: (tx: Sql) => Promise<T>): Promise<T> =>
    pg.transaction((tx) => {
      // PGlite has no savepoint-based nesting: a nested call joins the outer
      // transaction (it would deadlock on PGlite's mutex otherwise).
      const inner: Sql = sqlOver(tx, (nested) => nested(inner));
      return fn(inner);
    });

  // A failed checkpoint (a full disk) leaves the log to the next one; the
  // statements that fail meanwhile say why.
  const checkpoints = setInterval(() => void pg.exec("CHECKPOINT").catch(() => undefined), checkpointEveryMs);
  checkpoints.unref();

  const base = sqlOver(pg, transaction);
  return {
    kind: "pglite",
    query: base.query.bind(base),
    transaction,
    // Its rows may go in several COPYs: one transaction keeps them one write.
    copyIn: (table, columns, text) => transaction((tx) => tx.copyIn(table, columns, text)),
    async close() {
      clearInterval(checkpoints);
      if (!pg.closed) await pg.close();
    },
  };
}

/**
 * PGlite's own words when PostgreSQL could not start on the files (a
 * truncated pg_control, a missing WAL segment, a disk too full to start on)
 * are Emscripten's, which tell an operator nothing they can act on: said in
 * theirs, with the original as the cause.
 */
function explainedOpenFailure(err: unknown): unknown {
  if (!(err instanceof Error) || !/^(Aborted\(|PGlite failed to initialize)/.test(err.message)) return err;
  return new Error(
    "PostgreSQL could not start on its files: one of them is damaged or missing, or the disk is full. Check the free space (df), then restore the data directory from a backup",
    { cause: err },
  );
}

/**
 * PGlite's file system layer (Emscripten's) throws a plain object,
 * `{ name: "ErrnoError", errno }`, whose number is WASI's: named here as an
 * Error with the system's code (EROFS, EISDIR…), which PathFailure spells out.
 */
function fromWasiErrno(err: unknown): unknown {
  const errno = (err as { errno?: unknown } | null)?.errno;
  if (err instanceof Error || (err as { name?: unknown } | null)?.name !== "ErrnoError" || typeof errno !== "number") return err;
  const code = WASI_ERRNO[errno];
  if (code === undefined) return new Error(`file system error ${errno} in the embedded database's files`);
  return Object.assign(new Error(`${code}: ${systemDescription(code) ?? "file system error"}`), { code });
}

/** WASI's errno values (wasi_snapshot_preview1), in order from 1: what PGlite's errors carry. */
const WASI_ERRNO: Record<number, string> = Object.fromEntries(
  (
    "E2BIG EACCES EADDRINUSE EADDRNOTAVAIL EAFNOSUPPORT EAGAIN EALREADY EBADF EBADMSG EBUSY ECANCELED ECHILD " +
    "ECONNABORTED ECONNREFUSED ECONNRESET EDEADLK EDESTADDRREQ EDOM EDQUOT EEXIST EFAULT EFBIG EHOSTUNREACH EIDRM " +
    "EILSEQ EINPROGRESS EINTR EINVAL EIO EISCONN EISDIR ELOOP EMFILE EMLINK EMSGSIZE EMULTIHOP ENAMETOOLONG " +
    "ENETDOWN ENETRESET ENETUNREACH ENFILE ENOBUFS ENODEV ENOENT ENOEXEC ENOLCK ENOLINK ENOMEM ENOMSG ENOPROTOOPT " +
    "ENOSPC ENOSYS ENOTCONN ENOTDIR ENOTEMPTY ENOTRECOVERABLE ENOTSOCK ENOTSUP ENOTTY ENXIO EOVERFLOW EOWNERDEAD " +
    "EPERM EPIPE EPROTO EPROTONOSUPPORT EPROTOTYPE ERANGE EROFS ESPIPE ESRCH ESTALE ETIMEDOUT ETXTBSY EXDEV"
  )
    .split(" ")
    .map((code, index) => [index + 1, code]),
);
