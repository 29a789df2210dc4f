/**
 * The one thing the stores need from a database: parameterised SQL and
 * transactions. PGlite (embedded) and pg (PostgreSQL) both implement it, so
 * every store runs the same SQL on both.
 */
export interface Sql {
  /** Runs one statement with `$1`-style parameters and returns its rows. */
  query<R extends object = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<R[]>;
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T>;
  /**
   * Loads rows into `table` with one `COPY … FROM STDIN`: PostgreSQL's own
   * bulk path, far cheaper per row than any INSERT. `text` is the rows in
   * COPY's text format (copy-text.ts).
   */
  copyIn(table: string, columns: readonly string[], text: string): Promise<void>;
}

/** A database the process opened and must close. */
export interface Database extends Sql {
  /** "pglite" or "postgres", for logs and the start-up banner. */
  readonly kind: "pglite" | "postgres";
  close(): Promise<void>;
}

/** Thrown by a driver when the database cannot be reached; the HTTP layer answers 503. */
export class DatabaseUnavailableError extends Error {
  override readonly name = "DatabaseUnavailableError";
}

/**
 * PostgreSQL's SQLSTATEs for resources it is short of now and may have once
 * an operator frees some, so that a client should repeat later: not
 * configuration_limit_exceeded (53400), which the same statement meets again.
 */
const SHORT_OF_RESOURCES = new Set([
  "53000", // insufficient_resources
  "53100", // disk_full
  "53200", // out_of_memory
  "53300", // too_many_connections
]);

/** Whether an error is one of SHORT_OF_RESOURCES. */
export function outOfResources(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && SHORT_OF_RESOURCES.has(code);
}
