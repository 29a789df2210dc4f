// Versioned schema migrations, run at start-up by every instance.
//
// Each migration is one file of server/db/migrations/, numbered from 001
// (its number is its version); its comments keep the why of its
// statements. The files are append-only: never edit a released one, add a
// new one. A migration's statements run one at a time (PGlite's query()
// takes a single statement) and, with its `schema_migrations` row, in the
// one transaction of migrate(). On PostgreSQL several instances may start
// at once: a transaction-scoped advisory lock taken before anything else
// makes them run one after the other, and the later ones find nothing to do.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { splitStatements } from "./split-statements.js";
import type { Sql } from "./sql.js";
import { packageRoot } from "../package-root.js";

/** Arbitrary constant naming "agentd schema migration" among advisory locks. */
const MIGRATION_LOCK_KEY = 0x61_67_65_6e; // "agen"

/** One migration: its statements, in order. */
export type Migration = readonly string[];

const FILE_NAME = /^(\d{3})-[a-z0-9-]+\.sql$/;

/**
 * The migration files sit in server/db/migrations/ of the package, whether
 * this module runs from server/db/ (tests, tsx), dist/server/db/ (compiled;
 * tsc copies no .sql file) or a bundle in dist/bin/: under the package's
 * root, found upwards as for openapi.yaml.
 */
export function findMigrations(from: string = path.dirname(fileURLToPath(import.meta.url))): string {
  const root = packageRoot(from);
  const dir = path.join(root, "server", "db", "migrations");
  if (!existsSync(dir)) throw new Error(`server/db/migrations not found in the package at ${root}`);
  return dir;
}

/** The migrations of `dir` in version order. File n is version n: a missing or misnamed file is refused, never skipped. */
export function readMigrations(dir: string = findMigrations()): Migration[] {
  const files = readdirSync(dir)
    .filter((name) => name.endsWith(".sql"))
    .sort();
  return files.map((name, index) => {
    const version = index + 1;
    if (Number(FILE_NAME.exec(name)?.[1]) !== version) {
      throw new Error(`${path.join(dir, name)}: migration ${version} must be named ${String(version).padStart(3, "0")}-<what>.sql`);
    }
    return splitStatements(readFileSync(path.join(dir, name), "utf8"));
  });
}

/** This agentd's migrations, read when the module loads. */
export const MIGRATIONS: readonly Migration[] = readMigrations();

/**
 * Whether schema_migrations is in the schema agentd creates in (the first
 * of the search_path), not merely somewhere on the path: another
 * application's, in a later schema, is not agentd's record.
 */
const OWN_TABLE_PRESENT = "SELECT to_regclass(quote_ident(current_schema()) || '.schema_migrations') IS NOT NULL AS present";

/** Whether versions 1 to `latest` are all applied, and nothing newer: false too when there is no schema yet. */
async function upToDate(sql: Sql, latest: number): Promise<boolean> {
  try {
    // Asked first, so that a new database is told apart without a failed
    // statement: operators alert on agentd_db_errors_total.
    const [table] = await sql.query<{ present: boolean }>(OWN_TABLE_PRESENT);
    if (!table?.present) return false;
    const [row] = await sql.query<{ applied: number; newest: number }>(
      "SELECT count(*)::int AS applied, coalesce(max(version), 0) AS newest FROM schema_migrations",
    );
    return row !== undefined && row.applied === latest && row.newest === latest;
  } catch {
    // The database refused: the locked path below finds out why.
    return false;
  }
}

/** A schema older than this agentd's, which the caller did not ask to upgrade. */
export class SchemaBehindError extends Error {}

export interface MigrateOptions {
  /**
   * Whether a schema older than `migrations` is brought up to date (the
   * default) or refused. A new database is made either way: nothing runs
   * on it yet.
   */
  upgrade?: boolean;
}

/** Applies the migrations this database lacks; returns the versions it applied. */
export async function migrate(sql: Sql, migrations: readonly Migration[] = MIGRATIONS, { upgrade = true }: MigrateOptions = {}): Promise<number[]> {
  // Most starts find the schema up to date: one read tells, without the
  // locked transaction below (a write on PGlite, paid at every start).
  // Versions only ever go up, so a stale answer can only send us there.
  if (await upToDate(sql, migrations.length)) return [];
  return sql.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_KEY]);
    // Made only when missing: CREATE TABLE IF NOT EXISTS needs CREATE on
    // the schema even when the table is there, so a role that may only read
    // and write was told "permission denied for schema public", not what it
    // lacks. Still IF NOT EXISTS: taking an advisory lock reads no catalog
    // change, so the lookup may not see the table that the instance which
    // held the lock before has just made (three instances starting at once
    // met it).
    const [table] = await tx.query<{ present: boolean }>(OWN_TABLE_PRESENT);
    if (!table?.present) {
      await tx
        .query(
          `CREATE TABLE IF NOT EXISTS schema_migrations (
             version integer PRIMARY KEY,
             applied_at timestamptz NOT NULL DEFAULT now()
           )`,
        )
        .catch(lacking("a new database's schema is made by a role that may create tables in it (its owner can)"));
    }
    const rows = await tx
      .query<{ version: number }>("SELECT version FROM schema_migrations")
      .catch(lacking("the role needs the README's grants (PostgreSQL) on the tables it serves"));
    const applied = new Set(rows.map((row) => row.version));
    const newest = Math.max(0, ...applied);
    if (newest > migrations.length) {
      throw new Error(
        `database schema version ${newest} is newer than this agentd (${migrations.length}); upgrade agentd`,
      );
    }
    if (!upgrade && newest > 0 && newest < migrations.length) {
      throw new SchemaBehindError(
        `database schema version ${newest} is older than this agentd (${migrations.length}); only \`agentd serve\` and \`agentd import\` upgrade it: ` +
          "start this release's server first, or run this command with the agentd of the database's release",
      );
    }
    const done: number[] = [];
    for (const [index, statements] of migrations.entries()) {
      const version = index + 1;
      if (applied.has(version)) continue;
      const needsOwner = lacking(
        `migration ${version} of this agentd needs the rights of the role that owns the schema: start it once with that role, then give the grants again`,
      );
      for (const statement of statements) await tx.query(statement).catch(needsOwner);
      await tx.query("INSERT INTO schema_migrations (version) VALUES ($1)", [version]);
      done.push(version);
    }
    return done;
  });
}

/**
 * A rejection handler that says, for PostgreSQL's "insufficient privilege"
 * (42501), what the role lacks at this step; any other failure goes on as
 * it came (a database unavailable stays one).
 */
function lacking(what: string): (err: unknown) => never {
  return (err) => {
    if ((err as { code?: unknown }).code === "42501" && err instanceof Error) throw new Error(`${err.message}: ${what}`, { cause: err });
    throw err;
  };
}
