// Fresh databases for tests: an embedded PGlite in a temporary directory, or
// a PostgreSQL database `agentd_test_<random>` created on
// AGENTD_TEST_DATABASE_URL and dropped afterwards, so parallel runs never
// share state.
//
//   const pg = await freshPostgres();          // throws in CI without the variable
//   const db = await pg.open();                // as many pools as the test wants
//   ...
//   await pg.cleanup();                        // closes them and drops the database
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { migrate } from "../../server/db/migrations.js";
import { openPglite } from "../../server/db/pglite.js";
import { openPostgres } from "../../server/db/postgres.js";
import type { Database } from "../../server/db/sql.js";
import { copyPgliteTemplate } from "./pglite-template.js";

export type DatabaseKind = Database["kind"];

export interface TestDatabase {
  kind: DatabaseKind;
  /** PGlite: the data directory. PostgreSQL: the database URL. */
  location: string;
  /** Opens a handle (not migrated). PGlite allows one open handle at a time. */
  open(): Promise<Database>;
  /** Opens a handle and runs the migrations. */
  openMigrated(): Promise<Database>;
  /** Closes every handle still open and deletes the database. */
  cleanup(): Promise<void>;
}

/** AGENTD_TEST_DATABASE_URL; in CI its absence is an error, never a reason to skip. */
export function postgresTestUrl(): string | undefined {
  const url = process.env.AGENTD_TEST_DATABASE_URL;
  if (url === undefined || url === "") {
    if (process.env.CI) throw new Error("AGENTD_TEST_DATABASE_URL must be set in CI: the PostgreSQL suites may not skip");
    return undefined;
  }
  return url;
}

function tracking(kind: DatabaseKind, location: string, opener: () => Promise<Database>, drop: () => Promise<void>): TestDatabase {
  const handles = new Set<Database>();
  const open = async () => {
    const db = await opener();
    handles.add(db);
    const close = db.close.bind(db);
    return {
      ...db,
      kind: db.kind,
      close: async () => {
        handles.delete(db);
        await close();
      },
    } satisfies Database;
  };
  return {
    kind,
    location,
    open,
    async openMigrated() {
      const db = await open();
      await migrate(db);
      return db;
    },
    async cleanup() {
      for (const db of [...handles]) await db.close().catch(() => {});
      handles.clear();
      await drop();
    },
  };
}

export async function freshPglite(): Promise<TestDatabase> {
  const dir = await mkdtemp(path.join(tmpdir(), "agentd-pglite-"));
  await copyPgliteTemplate(dir);
  return tracking("pglite", dir, () => openPglite(dir), () => rm(dir, { recursive: true, force: true }));
}

async function admin<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A fresh PostgreSQL database; throws when AGENTD_TEST_DATABASE_URL is unset (see postgresTestUrl). */
export async function freshPostgres(timeoutMs = 5_000): Promise<TestDatabase> {
  const base = postgresTestUrl();
  if (base === undefined) throw new Error("AGENTD_TEST_DATABASE_URL is not set");
  const name = `agentd_test_${randomBytes(6).toString("hex")}`;
  await admin(base, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(base);
  url.pathname = `/${name}`;
  return tracking(
    "postgres",
    url.toString(),
    () => openPostgres(url.toString(), { timeoutMs }),
    () => admin(base, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  );
}

/** The kinds a suite can run against here: PGlite always, PostgreSQL when configured. */
export function availableKinds(): { kind: DatabaseKind; fresh: () => Promise<TestDatabase>; available: boolean }[] {
  return [
    { kind: "pglite", fresh: freshPglite, available: true },
    { kind: "postgres", fresh: () => freshPostgres(), available: postgresTestUrl() !== undefined },
  ];
}
