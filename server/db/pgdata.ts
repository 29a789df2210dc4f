// Where the embedded database keeps its files inside the data directory, in
// a module of its own: the CLI asks whether one exists without loading PGlite.
import { existsSync } from "node:fs";
import path from "node:path";

export function pgdataDir(dataDir: string): string {
  return path.join(path.resolve(dataDir), "pgdata");
}

/** Whether `dataDir` already holds an embedded database (PostgreSQL writes PG_VERSION first). */
export function hasEmbeddedDatabase(dataDir: string): boolean {
  return existsSync(path.join(pgdataDir(dataDir), "PG_VERSION"));
}
