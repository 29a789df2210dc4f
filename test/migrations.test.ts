// The migration files: read in version order, each cut into the single
// statements PGlite runs; that migrating a new database fails no statement;
// and what a migration does to rows that existed before it, on both
// databases. (What the migrated schema holds is store.test.ts's and
// multi-instance.test.ts's.)
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MIGRATIONS, findMigrations, migrate, readMigrations } from "../server/db/migrations.js";
import { hashToken } from "../server/store/sql-token-store.js";
import { availableKinds } from "./helpers/databases.js";
import { splitStatements } from "../server/db/split-statements.js";
import { instrumentedDatabase } from "../server/db/instrumented.js";
import { NO_METRICS } from "../server/ops/metrics.js";

describe("splitStatements", () => {
  it("ends a statement only at a ; outside comments, quotes and dollar-quoted bodies", () => {
    const script = [
      "-- leading comment; left out",
      "SELECT 'a;''b';",
      '/* c; */ SELECT "x;y" ;',
      "CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END $$;",
      "SELECT $tag$ ; $$ $tag$;",
      "SELECT a$b$ FROM t;",
      "CREATE TABLE t (",
      "  -- a comment inside stays",
      "  x int",
      ");;",
      "-- trailing comment",
    ].join("\n");
    expect(splitStatements(script)).toEqual([
      "SELECT 'a;''b'",
      'SELECT "x;y"',
      "CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END $$",
      "SELECT $tag$ ; $$ $tag$",
      "SELECT a$b$ FROM t",
      "CREATE TABLE t (\n  -- a comment inside stays\n  x int\n)",
    ]);
  });

  it("refuses a script whose quote, comment or body never closes", () => {
    for (const script of ["SELECT 'a;", "SELECT $$ ;", "/* ;", 'SELECT "a;']) {
      expect(() => splitStatements(script), script).toThrow(/unterminated/);
    }
  });
});

describe("readMigrations", () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it("reads every file of server/db/migrations, in order, as statements", () => {
    const files = readdirSync(findMigrations()).filter((name) => name.endsWith(".sql"));
    expect(MIGRATIONS).toHaveLength(files.length);
    for (const statements of MIGRATIONS) {
      expect(statements.length).toBeGreaterThan(0);
      for (const statement of statements) expect(statement).toMatch(/^[A-Z]/);
    }
  });

  it("refuses a missing or misnamed file rather than shift the versions", async () => {
    dir = await mkdtemp(join(tmpdir(), "agentd-migrations-"));
    await writeFile(join(dir, "001-first.sql"), "SELECT 1;");
    await writeFile(join(dir, "003-third.sql"), "SELECT 3;");
    expect(() => readMigrations(dir)).toThrow(/003-third\.sql: migration 2 must be named 002-<what>\.sql/);
    await writeFile(join(dir, "002-second.sql"), "SELECT 2;");
    expect(readMigrations(dir)).toEqual([["SELECT 1"], ["SELECT 2"], ["SELECT 3"]]);
  });
});

describe.each(availableKinds())("migrate on $kind", ({ fresh, available }) => {
  it.skipIf(!available)("builds a new database, then finds it up to date, without one failed statement (agentd_db_errors_total)", async () => {
    const t = await fresh();
    try {
      const statements: boolean[] = [];
      const db = instrumentedDatabase(await t.open(), { ...NO_METRICS, dbQuery: (_seconds, failed) => statements.push(failed) });
      expect(await migrate(db)).toEqual(MIGRATIONS.map((_, index) => index + 1));
      expect(await migrate(db)).toEqual([]);
      expect(statements.length).toBeGreaterThan(0);
      expect(statements.filter((failed) => failed)).toEqual([]);
    } finally {
      await t.cleanup();
    }
  });
});

describe.each(availableKinds())("an older schema on $kind", ({ fresh, available }) => {
  it.skipIf(!available)("is refused without upgrade, which makes a new database all the same, and upgraded with it", async () => {
    const older = await fresh();
    const blank = await fresh();
    try {
      const db = await older.open();
      expect(await migrate(db, MIGRATIONS.slice(0, -1))).toEqual(MIGRATIONS.slice(0, -1).map((_, index) => index + 1));
      await expect(migrate(db, MIGRATIONS, { upgrade: false })).rejects.toThrow(
        `database schema version ${MIGRATIONS.length - 1} is older than this agentd (${MIGRATIONS.length}); only \`agentd serve\` and \`agentd import\` upgrade it`,
      );
      const [row] = await db.query<{ newest: number }>("SELECT max(version) AS newest FROM schema_migrations");
      expect(row?.newest).toBe(MIGRATIONS.length - 1);
      expect(await migrate(db, MIGRATIONS, { upgrade: true })).toEqual([MIGRATIONS.length]);
      expect(await migrate(await blank.open(), MIGRATIONS, { upgrade: false })).toEqual(MIGRATIONS.map((_, index) => index + 1));
    } finally {
      await older.cleanup();
      await blank.cleanup();
    }
  });
});

describe.each(availableKinds())("migration 6 on $kind", ({ fresh, available }) => {
  it.skipIf(!available)("gives every token that existed before it an id of its own, and every token written later one too", async () => {
    const t = await fresh();
    try {
      const db = await t.open();
      expect(await migrate(db, MIGRATIONS.slice(0, 5))).toEqual([1, 2, 3, 4, 5]);
      const secrets = Array.from({ length: 50 }, (_, i) => `token-from-before-ids-${i}`);
      for (const secret of secrets) {
        await db.query("INSERT INTO tokens (token_hash, acls) VALUES ($1, $2)", [hashToken(secret), ["agentd.#"]]);
      }
      expect(await migrate(db, MIGRATIONS.slice(0, 6))).toEqual([6]);

      const rows = await db.query<{ id: string; token_hash: string }>("SELECT id, token_hash FROM tokens");
      expect(rows).toHaveLength(secrets.length);
      for (const row of rows) {
        expect(row.id).toMatch(/^[0-9a-f]{12}$/);
        expect(row.token_hash).not.toContain(row.id);
      }
      expect(new Set(rows.map((row) => row.id)).size).toBe(secrets.length);

      // As an instance that predates the ids writes it, naming no id.
      await db.query("INSERT INTO tokens (token_hash, acls) VALUES ($1, $2)", [hashToken("written-by-an-old-instance"), ["agentd.#"]]);
      const [late] = await db.query<{ id: string }>("SELECT id FROM tokens WHERE token_hash = $1", [hashToken("written-by-an-old-instance")]);
      expect(late?.id).toMatch(/^[0-9a-f]{12}$/);
      expect(rows.map((row) => row.id)).not.toContain(late?.id);
    } finally {
      await t.cleanup();
    }
  });
});
