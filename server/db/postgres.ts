// PostgreSQL through a bounded `pg` pool. Every wait is bounded by
// `timeoutMs` (connecting, and each statement both server- and client-side),
// so a slow or vanished database turns into DatabaseUnavailableError (503)
// instead of a hung request. Broken connections are dropped by the pool and
// new ones are made on demand, so the service recovers by itself when
// PostgreSQL comes back.
import { pipeline } from "node:stream/promises";
import { Readable } from "node:stream";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import type { Database, Sql } from "./sql.js";
import { DatabaseUnavailableError, outOfResources } from "./sql.js";

export interface PostgresOptions {
  /** Upper bound on connecting and on one statement. */
  timeoutMs: number;
  /** Connections per process; several instances share PostgreSQL's max_connections. */
  maxConnections?: number;
  /** Errors of idle connections (e.g. PostgreSQL restarting); they are otherwise ignored. */
  onBackgroundError?: (error: Error) => void;
}

// Node socket errors that mean "cannot reach the server".
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EPIPE",
]);

// SQLSTATEs that mean "the database is down, restarting, full or too slow".
const UNAVAILABLE_SQLSTATES = new Set([
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now (starting up / shutting down)
  "57014", // query_canceled: statement_timeout fired
]);

// pg reports its own time-outs and lost connections as plain Errors.
const UNAVAILABLE_MESSAGES =
  /timeout exceeded when trying to connect|Connection terminated|connection timeout|Query read timeout|not queryable|Client was closed/i;

/** Whether a driver error means the database cannot be used right now (as opposed to a bad statement). */
function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    if (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || code.startsWith("08") || outOfResources(error)) return true;
  }
  if (error instanceof AggregateError) return error.errors.some(isUnavailable);
  return UNAVAILABLE_MESSAGES.test(error.message);
}

function translate(error: unknown): unknown {
  if (error instanceof DatabaseUnavailableError || !isUnavailable(error)) return error;
  const reason = error instanceof Error ? error.message || (error as { code?: string }).code : String(error);
  return new DatabaseUnavailableError(`database unavailable: ${reason}`, { cause: error });
}

type Client = pg.PoolClient;

/** Opens a pool on `url` and checks that the database answers. */
export async function openPostgres(url: string, options: PostgresOptions): Promise<Database> {
  const { timeoutMs } = options;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: timeoutMs,
    // The server cancels a slow statement first (and the connection stays
    // usable); the client-side limit catches a server that stopped answering.
    statement_timeout: timeoutMs,
    query_timeout: timeoutMs + 1_000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    application_name: "agentd",
  });
  // An idle connection dying (PostgreSQL restart, admin shutdown) is emitted
  // here; without a listener it would crash the process.
  pool.on("error", (error) => options.onBackgroundError?.(error));

  const query = async <R extends object>(client: pg.Pool | Client, text: string, params: readonly unknown[]) => {
    try {
      const result = await client.query<R & pg.QueryResultRow>(text, [...params]);
      return result.rows as R[];
    } catch (error) {
      throw translate(error);
    }
  };

  // pg has no COPY of its own: pg-copy-streams runs COPY FROM STDIN on a
  // checked-out client, and the rows are streamed to it.
  const copyIn = async (client: Client, table: string, columns: readonly string[], text: string) => {
    try {
      await pipeline(Readable.from([text]), client.query(copyFrom(`COPY ${table} (${columns.join(", ")}) FROM STDIN`)));
    } catch (error) {
      throw translate(error);
    }
  };

  const transaction = async <T>(fn: (tx: Sql) => Promise<T>): Promise<T> => {
    let client: Client;
    try {
      client = await pool.connect();
    } catch (error) {
      throw translate(error);
    }
    // A checked-out client has no pool listener: a connection lost mid
    // transaction must not become an unhandled 'error' event.
    let broken: unknown;
    const onError = (error: Error) => {
      broken = error;
    };
    client.on("error", onError);
    const tx: Sql = {
      query: (text, params = []) => query(client, text, params),
      // No savepoints needed by the stores: a nested call joins the outer transaction.
      transaction: (nested) => nested(tx),
      copyIn: (table, columns, text) => copyIn(client, table, columns, text),
    };
    try {
      await query(client, "BEGIN", []);
      const result = await fn(tx);
      await query(client, "COMMIT", []);
      return result;
    } catch (error) {
      if (isUnavailable(error)) {
        broken ??= error; // no point rolling back on a dead connection
      } else {
        try {
          await client.query("ROLLBACK");
        } catch (rollbackError) {
          broken ??= rollbackError;
        }
      }
      throw translate(error);
    } finally {
      client.off("error", onError);
      // Destroy rather than reuse a connection whose state is unknown.
      client.release(broken instanceof Error ? broken : broken === undefined ? undefined : true);
    }
  };

  const db: Database = {
    kind: "postgres",
    query: (text, params = []) => query(pool, text, params),
    transaction,
    copyIn: (table, columns, text) => transaction((tx) => tx.copyIn(table, columns, text)),
    async close() {
      if (!pool.ended) await pool.end();
    },
  };

  // The one read that says the database answers also reads its encoding:
  // in any but UTF8 a pause reason the contract allows fails (SQL_ASCII
  // counts bytes against the length check, LATIN1 has no emoji), a 500
  // at the first such pause rather than a refusal now.
  let rows: { encoding: string }[];
  try {
    rows = await db.query<{ encoding: string }>("SELECT current_setting('server_encoding') AS encoding");
  } catch (error) {
    await db.close();
    throw translate(error);
  }
  const encoding = rows[0]?.encoding;
  if (encoding !== "UTF8") {
    await db.close();
    throw new Error(
      `it is encoded in ${encoding}, and agentd stores text as sent, which needs UTF8: create the database with \`createdb --encoding=UTF8 --template=template0 <name>\``,
    );
  }
  return db;
}
