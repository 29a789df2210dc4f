// What only PostgreSQL shows (AGENTD_TEST_DATABASE_URL; required in CI):
// several pools and instances sharing one database, and the database going away.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../server/config/load.js";
import { migrate, MIGRATIONS } from "../server/db/migrations.js";
import { openStores } from "../server/stores.js";
import { openPostgres } from "../server/db/postgres.js";
import { DatabaseUnavailableError, type Database, type Sql } from "../server/db/sql.js";
import type { AgentRecord } from "../server/store/agent-store.js";
import { SqlAgentStore } from "../server/store/sql-agent-store.js";
import { VersionedListStore } from "../server/store/versioned-list-store.js";
import { readOriginUuid } from "../server/store/deployment.js";
import { DEMO_AGENTS } from "../server/store/seed.js";
import { loggedIn } from "./helpers/agents.js";
import { freshPostgres, postgresTestUrl, type TestDatabase } from "./helpers/databases.js";

async function resetAgents(db: Database, agents: readonly AgentRecord[] = DEMO_AGENTS): Promise<SqlAgentStore> {
  await db.query("DELETE FROM agents");
  const store = new SqlAgentStore(db, await readOriginUuid(db, null));
  await store.upsert(agents);
  return store;
}

describe.skipIf(postgresTestUrl() === undefined)("PostgreSQL specifics", () => {
  let t: TestDatabase;
  beforeEach(async () => {
    t = await freshPostgres();
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it("three instances migrating at once apply each migration exactly once", async () => {
    const dbs = await Promise.all([t.open(), t.open(), t.open()]);
    const applied = await Promise.all(dbs.map((db) => migrate(db)));
    expect(applied.flat().sort((a, b) => a - b)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    expect(applied.filter((a) => a.length > 0)).toHaveLength(1);
    const [db] = dbs;
    expect(await db.query("SELECT version FROM schema_migrations")).toHaveLength(MIGRATIONS.length);
    const uuids = await Promise.all(dbs.map((d) => readOriginUuid(d, null)));
    expect(new Set(uuids).size).toBe(1);
  });

  // An operator saw an idle instance keep two database backends at a fifth of
  // a core each: PostgreSQL JIT-compiled every relay poll (migration 7).
  // auto_explain sends each plan, nested statements included, to the client.
  it("the relay's claim is never JIT-compiled, even where PostgreSQL compiles any costly plan", async () => {
    await (await t.openMigrated()).close();
    const client = new pg.Client({ connectionString: t.location });
    await client.connect();
    try {
      const jit = await client.query<{ available: boolean }>("SELECT pg_jit_available() AS available");
      expect(jit.rows[0]!.available, "this PostgreSQL has no JIT: the test would prove nothing").toBe(true);
      const plans: string[] = [];
      client.on("notice", (notice) => plans.push(notice.message ?? ""));
      for (const setting of ["LOAD 'auto_explain'", "SET auto_explain.log_min_duration = 0", "SET auto_explain.log_nested_statements = on", "SET client_min_messages = log", "SET jit = on"]) {
        await client.query(setting);
      }
      await client.query("SELECT * FROM event_outbox_claim('webhook http://x', 30000, 100, 1000)");
      await client.query("SELECT * FROM event_outbox_peek('webhook http://x', 100, 1000)");
      expect(plans.filter((plan) => plan.includes("event_outbox")).length).toBeGreaterThanOrEqual(2);
      expect(plans.filter((plan) => plan.includes("JIT:"))).toEqual([]);
    } finally {
      await client.end();
    }
  });

  it("an upgrade that migrates the schema says so in the log, and a start with nothing to migrate does not", async () => {
    const loaded = loadConfig({ AGENTD_DATABASE_URL: t.location });
    if (!loaded.ok) throw new Error(loaded.errors.join("; "));
    const lines: { msg: string; migrations?: number[] }[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string; migrations?: number[] }) });
    const first = await openStores(loaded.config, logger);
    await first.db.close();
    expect(lines.filter((line) => line.migrations !== undefined)).toEqual([
      expect.objectContaining({ msg: `database schema migrated to version ${MIGRATIONS.length}`, migrations: MIGRATIONS.map((_, i) => i + 1) }),
    ]);
    lines.length = 0;
    const second = await openStores(loaded.config, logger);
    await second.db.close();
    expect(lines).toEqual([]);
  });

  // The token history's functions run with the migrating role's rights
  // (migration 10): a caller's temporary table of the same name must not
  // take the place of the real one, or any role that can connect would
  // run its own code with those rights.
  it("the token history's functions use the migrated table, not a caller's temporary one of the same name", async () => {
    const owner = await t.openMigrated();
    const role = `agentd_tmp_${Date.now()}`;
    await owner.query(`CREATE ROLE ${role} LOGIN PASSWORD 'tmp'`);
    const url = new URL(t.location);
    url.username = role;
    url.password = "tmp";
    const caller = new pg.Client({ connectionString: url.href });
    try {
      await caller.connect();
      await caller.query("CREATE TEMP TABLE token_history (one_row boolean PRIMARY KEY DEFAULT true, first_made_at timestamptz NOT NULL DEFAULT now())");
      const claimed = await caller.query<{ claimed: boolean }>("SELECT token_history_claim() AS claimed");
      expect(claimed.rows).toEqual([{ claimed: true }]);
      expect((await caller.query("SELECT 1 FROM pg_temp.token_history")).rows).toEqual([]);
      expect(await owner.query("SELECT 1 AS one FROM token_history")).toEqual([{ one: 1 }]);
    } finally {
      await caller.end();
      await owner.query(`DROP ROLE IF EXISTS ${role}`);
      await owner.close();
    }
  });

  it("two stores on two pools see each other's pauses, also when pausing concurrently", async () => {
    const [a, b] = [await t.openMigrated(), await t.openMigrated()];
    const agents = Array.from({ length: 10 }, (_, i) => loggedIn(i + 1));
    const storeA = await resetAgents(a, agents);
    const storeB = new SqlAgentStore(b, await readOriginUuid(b, null));
    expect(storeB.originUuid).toBe(storeA.originUuid);

    expect(await storeA.pause("1003", "from A")).toBe("paused");
    expect(await storeB.getByNumber("1003")).toMatchObject({ paused: true, paused_reason: "from A" });

    const jobs = Array.from({ length: 50 }, (_, i) => {
      const store = i % 2 === 0 ? storeA : storeB;
      return store.pause(String(1001 + (i % 10)), `${i % 2 === 0 ? "A" : "B"}${i}`);
    });
    expect(new Set(await Promise.all(jobs))).toEqual(new Set(["paused"]));
    const fromA = await storeA.list();
    expect(await storeB.list()).toEqual(fromA);
    for (const row of fromA) {
      expect(row.paused).toBe(true);
      // Each agent got one of the reasons sent to it, whole.
      const sent = Array.from({ length: 50 }, (_, i) => i)
        .filter((i) => 1001 + (i % 10) === Number(row.number))
        .map((i) => `${i % 2 === 0 ? "A" : "B"}${i}`);
      expect(sent).toContain(row.paused_reason);
    }
  });

  it("the list is reused while the data version stands, and read again after any instance's write", async () => {
    const [a, b] = [await t.openMigrated(), await t.openMigrated()];
    const writer = await resetAgents(b, Array.from({ length: 10 }, (_, i) => loggedIn(i + 1)));
    let listQueries = 0;
    const countingA: Sql = {
      query: (text, params) => {
        if (text.includes("FROM agents ORDER BY id")) listQueries++;
        return a.query(text, params);
      },
      transaction: (fn) => a.transaction(fn),
      copyIn: (table, columns, text) => a.copyIn(table, columns, text),
    };
    const reader = new VersionedListStore(new SqlAgentStore(countingA, writer.originUuid));
    const direct = new SqlAgentStore(a, writer.originUuid);

    const first = await reader.list();
    expect(await reader.list()).toBe(first);
    const together = await Promise.all([reader.list(), reader.list(), reader.list()]);
    expect(together.every((list) => list === first)).toBe(true);
    expect(listQueries).toBe(1);

    const writes: [string, () => Promise<unknown>][] = [
      ["a pause through another pool", () => writer.pause("1004", "elsewhere")],
      ["the same pause again", () => writer.pause("1004", "elsewhere")],
      ["an unpause through another pool", () => writer.unpause("1004")],
      ["an import through another pool", () => writer.upsert([loggedIn(11)])],
      ["an update typed by an operator", () => b.query("UPDATE agents SET paused = false, paused_reason = NULL WHERE id = 4")],
    ];
    let previous = first;
    for (const [what, write] of writes) {
      await write();
      const list = await reader.list();
      expect(list, what).not.toBe(previous);
      expect(list, what).toEqual(await direct.list());
      previous = list;
    }
    expect(listQueries).toBe(1 + writes.length);
    // Single-agent reads and pauses go straight to the database.
    expect(await reader.getByNumber("1011")).toEqual(await direct.getByNumber("1011"));
    expect(await reader.pause("1011", "here")).toBe("paused");
    expect((await reader.list()).find((agent) => agent.id === 11)).toMatchObject({ paused: true, paused_reason: "here" });
    expect(await reader.unpause("1011")).toBe("unpaused");
    expect((await reader.list()).find((agent) => agent.id === 11)).toMatchObject({ paused: false, paused_reason: null });
  });

  // Found by a hostile client's walk: on SQL_ASCII, 30 emoji (30 characters) failed the length
  // check as 120 bytes, and LATIN1 cannot hold one: a 500 for reasons the contract allows.
  it("a database not encoded in UTF8 is refused when opened, naming its encoding and how to make one that is", async () => {
    const name = `agentd_test_ascii_${randomBytes(6).toString("hex")}`;
    const base = postgresTestUrl()!;
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${name} ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`);
      const url = new URL(base);
      url.pathname = `/${name}`;
      const error = await openPostgres(url.toString(), { timeoutMs: 5_000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toBe(
        "it is encoded in SQL_ASCII, and agentd stores text as sent, which needs UTF8: create the database with `createdb --encoding=UTF8 --template=template0 <name>`",
      );
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });

  it("an unreachable server is DatabaseUnavailableError, quickly", async () => {
    const started = Date.now();
    const error = await openPostgres("postgres://postgres@127.0.0.1:1/agentd", { timeoutMs: 2_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it("a statement slower than the time-out is DatabaseUnavailableError and the pool stays usable", async () => {
    const db = await openPostgres(t.location, { timeoutMs: 300 });
    try {
      const started = Date.now();
      await expect(db.query("SELECT pg_sleep(5)")).rejects.toBeInstanceOf(DatabaseUnavailableError);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(await db.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
    } finally {
      await db.close();
    }
  });

  it("a statement refused for want of resources (a full disk, memory) is DatabaseUnavailableError, a 503 to repeat later", async () => {
    const db = await openPostgres(t.location, { timeoutMs: 5_000 });
    try {
      for (const code of ["53100", "53200"]) {
        const error = await db.query(`DO $$ BEGIN RAISE EXCEPTION 'short of it' USING ERRCODE = '${code}'; END $$`).catch((e: unknown) => e);
        expect(error, code).toBeInstanceOf(DatabaseUnavailableError);
        expect((error as Error).cause, code).toMatchObject({ code });
      }
      // Any other refusal is the statement's own, a limit it will meet again (53400) included.
      for (const code of ["22023", "53400"]) {
        const other = await db.query(`DO $$ BEGIN RAISE EXCEPTION 'bad' USING ERRCODE = '${code}'; END $$`).catch((e: unknown) => e);
        expect(other, code).not.toBeInstanceOf(DatabaseUnavailableError);
      }
    } finally {
      await db.close();
    }
  });

  it("survives its connections being killed (PostgreSQL restart) and recovers by itself", async () => {
    const background: Error[] = [];
    const db = await openPostgres(t.location, { timeoutMs: 2_000, onBackgroundError: (e) => background.push(e) });
    const admin = new pg.Client({ connectionString: postgresTestUrl() });
    await admin.connect();
    const killAll = () =>
      admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'agentd' AND pid <> pg_backend_pid()",
        [new URL(t.location).pathname.slice(1)],
      );
    try {
      await migrate(db);
      const store = new SqlAgentStore(db, await readOriginUuid(db, null));
      await store.upsert([loggedIn(1)]);
      // Warm several idle connections, then kill them all: the pool reports, never crashes.
      await Promise.all(Array.from({ length: 5 }, () => db.query("SELECT pg_sleep(0.05)")));
      await killAll();
      await new Promise((r) => setTimeout(r, 200));
      expect(background.length).toBeGreaterThan(0);
      expect(await store.pause("1001", "after restart")).toBe("paused");

      // Killed in the middle of a transaction: unavailable, rolled back, and the next call works.
      const error = await db
        .transaction(async (tx) => {
          await new SqlAgentStore(tx, store.originUuid).pause("1001", "lost");
          await killAll();
          await tx.query("SELECT 1");
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DatabaseUnavailableError);
      expect(await store.getByNumber("1001")).toMatchObject({ paused_reason: "after restart" });
    } finally {
      await admin.end();
      await db.close();
    }
  });
});
