// The state layer against real databases: the same suite on the embedded
// PGlite and on PostgreSQL (AGENTD_TEST_DATABASE_URL; required in CI), plus
// what only one of them can show (PGlite surviving kill -9, several
// PostgreSQL pools sharing one database, PostgreSQL going away).
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import pg from "pg";
import pino from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../server/config/load.js";
import { migrate, MIGRATIONS } from "../server/db/migrations.js";
import { openStores } from "../server/stores.js";
import { openPostgres } from "../server/db/postgres.js";
import { DatabaseUnavailableError, type Database, type Sql } from "../server/db/sql.js";
import type { AgentRecord } from "../server/store/agent-store.js";
import { SqlAgentStore } from "../server/store/sql-agent-store.js";
import { VersionedListStore } from "../server/store/versioned-list-store.js";
import { readOriginUuid } from "../server/store/deployment.js";
import { importBatches, InvalidImportError } from "../server/store/agent-import-reader.js";
import { runAdmin } from "../server/admin/run-admin.js";
import { findContract } from "../server/contract.js";
import { DEMO_AGENTS, seedDemoAgents } from "../server/store/seed.js";
import { hashToken, SqlTokenStore } from "../server/store/sql-token-store.js";
import { loggedIn, loggedOut } from "./helpers/agents.js";
import { loadContract } from "./helpers/contract.js";
import { availableKinds, freshPglite, freshPostgres, postgresTestUrl, type TestDatabase } from "./helpers/databases.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const statusSchema = loadContract().schemaValidator("AgentStatus");

function expectContractStatus(value: unknown): void {
  const valid = statusSchema(value);
  expect(statusSchema.errors ?? [], JSON.stringify(value)).toEqual([]);
  expect(valid).toBe(true);
}

async function resetAgents(db: Database, agents: readonly AgentRecord[] = DEMO_AGENTS): Promise<SqlAgentStore> {
  await db.query("DELETE FROM agents");
  const store = new SqlAgentStore(db, await readOriginUuid(db, null));
  await store.upsert(agents);
  return store;
}

/**
 * The real database, with the statements sent inside its transactions
 * passed through `hooks` (to record them, or to make one fail).
 */
function insideTransactions(db: Database, hooks: (tx: Sql) => Pick<Sql, "query" | "copyIn">): Sql {
  return {
    query: (text, params) => db.query(text, params),
    copyIn: (table, columns, text) => db.copyIn(table, columns, text),
    transaction: (fn) => db.transaction((tx) => fn({ ...hooks(tx), transaction: (nested) => tx.transaction(nested) })),
  };
}

/** The import reader alone, no database: every agent of a good file (as read), or every problem. */
async function readImport(text: string, contractFile?: string): Promise<{ ok: true; agents: unknown[] } | { ok: false; problems: string[] }> {
  const agents: unknown[] = [];
  try {
    for await (const batch of importBatches(text, contractFile)) agents.push(...batch);
  } catch (error) {
    if (error instanceof InvalidImportError) return { ok: false, problems: error.problems };
    throw error;
  }
  return { ok: true, agents };
}

const kinds = availableKinds();
const missing = kinds.filter((k) => !k.available).map((k) => k.kind);
if (missing.length > 0) {
  // Visible, never silent: CI makes postgresTestUrl() throw instead.
  console.warn(`store.test.ts: skipping ${missing.join(", ")}: set AGENTD_TEST_DATABASE_URL to run it`);
}

describe.each(kinds)("store on $kind", ({ fresh, available }) => {
  let t: TestDatabase;
  let db: Database;

  const reopen = async (): Promise<void> => {
    await db.close();
    db = await t.openMigrated();
  };

  beforeAll(async () => {
    if (!available) return;
    t = await fresh();
    db = await t.openMigrated();
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  describe.skipIf(!available)("", () => {
    it("migrations are idempotent and refuse a schema newer than the code", async () => {
      expect(await migrate(db)).toEqual([]);
      const versions = await db.query<{ version: number }>("SELECT version FROM schema_migrations ORDER BY version");
      expect(versions.map((v) => v.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
      expect(await db.query("SELECT * FROM deployment")).toHaveLength(1);

      await db.query("INSERT INTO schema_migrations (version) VALUES (999)");
      try {
        await expect(migrate(db)).rejects.toThrow(/newer than this agentd/);
      } finally {
        await db.query("DELETE FROM schema_migrations WHERE version = 999");
      }
    });

    it("the schema refuses agents the contract forbids", async () => {
      await resetAgents(db, []);
      const insert = (values: string) =>
        db.query(`INSERT INTO agents (id, number, extension, context, logged, paused, paused_reason, state_interface) VALUES ${values}`);
      await expect(insert(`(1, '12a', NULL, NULL, false, false, NULL, NULL)`)).rejects.toThrow(/check constraint/);
      await expect(insert(`(1, '1', NULL, NULL, false, true, NULL, NULL)`)).rejects.toThrow(/paused_implies_logged/);
      await expect(insert(`(1, '1', 'x', NULL, false, false, NULL, NULL)`)).rejects.toThrow(/logged_out_has_no_line/);
      await expect(insert(`(1, '1', 'x', 'c', true, false, 'why', 'SIP/a')`)).rejects.toThrow(/reason_implies_paused/);
      await expect(insert(`(1, '1', 'x', 'c', true, false, NULL, 'no slash')`)).rejects.toThrow(/check constraint/);
      await expect(insert(`(0, '1', NULL, NULL, false, false, NULL, NULL)`)).rejects.toThrow(/check constraint/);
      expect(await db.query("SELECT * FROM agents")).toEqual([]);
    });

    it("lists, gets by id and by number: exactly the contract's nine fields", async () => {
      const store = await resetAgents(db);
      const list = await store.list();
      expect(list.map((a) => a.id)).toEqual(DEMO_AGENTS.map((a) => a.id));
      for (const agent of list) {
        expectContractStatus(agent);
        expect(Object.keys(agent).sort()).toEqual(
          ["context", "extension", "id", "logged", "number", "origin_uuid", "paused", "paused_reason", "state_interface"],
        );
        expect(agent.origin_uuid).toBe(store.originUuid);
      }
      // The demo data covers every state.
      expect(list.some((a) => a.logged && !a.paused)).toBe(true);
      expect(list.some((a) => !a.logged)).toBe(true);
      expect(list.some((a) => a.paused && a.paused_reason !== null)).toBe(true);

      expect(await store.getById(3)).toEqual({ ...DEMO_AGENTS[2], origin_uuid: store.originUuid });
      expect(await store.getByNumber("1002")).toEqual({ ...DEMO_AGENTS[1], origin_uuid: store.originUuid });
      expect(await store.getById(999)).toBeUndefined();
      expect(await store.getById(2 ** 31)).toBeUndefined(); // beyond int32: unknown, not a database error
      expect(await store.getById(1.5)).toBeUndefined();
      expect(await store.getByNumber("9999")).toBeUndefined();
    });

    it("pause: 404 for an unknown number, 409 when logged out, reason replaced and cleared", async () => {
      const store = await resetAgents(db);
      expect(await store.pause("9999", "x")).toBe("no such agent");
      expect(await store.pause("1002", "x")).toBe("not logged in");
      expect(await store.getByNumber("1002")).toMatchObject({ logged: false, paused: false, paused_reason: null });

      expect(await store.pause("1001", "lunch")).toBe("paused");
      expect(await store.getByNumber("1001")).toMatchObject({ logged: true, paused: true, paused_reason: "lunch" });
      expect(await store.pause("1001", "meeting")).toBe("paused");
      expect(await store.getByNumber("1001")).toMatchObject({ paused: true, paused_reason: "meeting" });
      expect(await store.pause("1001", null)).toBe("paused");
      expect(await store.getByNumber("1001")).toMatchObject({ paused: true, paused_reason: null });
      // Nobody else changed.
      const others = (await store.list()).filter((a) => a.number !== "1001");
      expect(others).toEqual(DEMO_AGENTS.filter((a) => a.number !== "1001").map((a) => ({ ...a, origin_uuid: store.originUuid })));
    });

    it("unpause: 404 for an unknown number, 409 when logged out, paused and reason cleared, a no-op when not paused", async () => {
      const store = await resetAgents(db);
      expect(await store.unpause("9999")).toBe("no such agent");
      expect(await store.unpause("1002")).toBe("not logged in");
      expect(await store.getByNumber("1002")).toMatchObject({ logged: false, paused: false, paused_reason: null });

      // 1003 is paused with a reason, 1004 without one.
      expect(await store.unpause("1003")).toBe("unpaused");
      expect(await store.getByNumber("1003")).toMatchObject({ logged: true, paused: false, paused_reason: null });
      expect(await store.unpause("1004")).toBe("unpaused");
      expect(await store.getByNumber("1004")).toMatchObject({ logged: true, paused: false, paused_reason: null });
      const before = await store.getByNumber("1001");
      expect(before).toMatchObject({ logged: true, paused: false });
      expect(await store.unpause("1001")).toBe("unpaused");
      expect(await store.getByNumber("1001")).toEqual(before);
      // Nobody else changed.
      const changed = ["1003", "1004"];
      const others = (await store.list()).filter((a) => !changed.includes(a.number));
      expect(others).toEqual(DEMO_AGENTS.filter((a) => !changed.includes(a.number)).map((a) => ({ ...a, origin_uuid: store.originUuid })));
    });

    it("50 concurrent pauses and unpauses of one agent leave a consistent row", async () => {
      const store = await resetAgents(db, [loggedIn(1), loggedIn(2)]);
      const jobs = Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? store.pause("1001", `reason ${i}`) : store.unpause("1001")));
      expect(await Promise.all(jobs)).toEqual(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? "paused" : "unpaused")));
      const row = await store.getByNumber("1001");
      expectContractStatus(row);
      // Whichever came last: paused with one of the reasons, or unpaused without one.
      if (row!.paused) expect(row!.paused_reason).toMatch(/^reason \d+$/);
      else expect(row!.paused_reason).toBeNull();
      expect(await store.getByNumber("1002")).toMatchObject({ paused: false, paused_reason: null });
      expect(await store.unpause("1001")).toBe("unpaused");
      expect(await store.getByNumber("1001")).toMatchObject({ paused: false, paused_reason: null });
    });

    it("50 concurrent pauses of one agent and of different agents leave consistent rows", async () => {
      const agents = [...Array.from({ length: 25 }, (_, i) => loggedIn(i + 1)), ...Array.from({ length: 25 }, (_, i) => loggedOut(i + 26))];
      const store = await resetAgents(db, agents);

      const reasons = Array.from({ length: 50 }, (_, i) => (i % 5 === 0 ? null : `reason ${i}`));
      const same = await Promise.all(reasons.map((reason) => store.pause("1001", reason)));
      expect(same).toEqual(reasons.map(() => "paused"));
      const one = await store.getByNumber("1001");
      expect(one?.paused).toBe(true);
      expect(reasons).toContain(one?.paused_reason);

      const outcomes = await Promise.all(agents.map((a) => store.pause(a.number, `r${a.id}`)));
      expect(outcomes).toEqual(agents.map((a) => (a.logged ? "paused" : "not logged in")));
      const rows = await store.list();
      expect(rows).toHaveLength(50);
      for (const row of rows) {
        expectContractStatus(row);
        if (row.id <= 25) expect(row).toMatchObject({ logged: true, paused: true, paused_reason: `r${row.id}` });
        else expect(row).toMatchObject({ logged: false, paused: false, paused_reason: null });
      }
    });

    it("upsert inserts and updates by id in one transaction, swapping numbers included", async () => {
      const store = await resetAgents(db, [loggedIn(1, "500"), loggedIn(2, "600")]);
      await store.upsert([loggedIn(1, "600"), loggedOut(2, "500"), loggedIn(3, "700")]);
      expect((await store.list()).map((a) => [a.id, a.number, a.logged])).toEqual([
        [1, "600", true],
        [2, "500", false],
        [3, "700", true],
      ]);
      // A failing row (number taken by an agent outside the batch) undoes the whole batch.
      await expect(store.upsert([loggedIn(4, "800"), loggedIn(5, "700")])).rejects.toThrow(/agents_number_key|duplicate key/);
      expect((await store.list()).map((a) => a.id)).toEqual([1, 2, 3]);
    });

    it("agentd import commits a valid file and writes nothing of an invalid one, whatever its values", async () => {
      const store = await resetAgents(db);
      const tokens = new SqlTokenStore(db);
      const before = { list: await store.list(), version: await store.dataVersion() };
      const run = (file: unknown) => runAdmin({ op: "import", text: JSON.stringify(file) }, { tokens, store });
      const fleet = Array.from({ length: 12_000 }, (_, i) => loggedIn(i + 1));

      const lastBad = await run([...fleet, { ...loggedIn(12_001), number: "12a" }]);
      expect(lastBad).toEqual({ ok: false, error: "invalid import file", problems: ['[12000].number: must match pattern "^[0-9]+$"'] });
      const garbage = await run([{ ...loggedIn(1), id: "one", logged: { yes: true } }, ...fleet.slice(1, 3)]);
      expect(garbage).toMatchObject({ ok: false, problems: ["[0].id: must be integer", "[0].logged: must be boolean"] });
      // The first batch goes to the database before it is checked: a repeated
      // id, an item that is not an object, a text where a number belongs are
      // refused by the database or rolled back, and the file's own problems
      // are what the import reports.
      const reader = await readImport(JSON.stringify(fileWithEveryProblem()));
      expect(reader).toMatchObject({ ok: false, problems: expect.arrayContaining(['[4].id: duplicate id 1 (first at [0])', "[11]: must be object"]) });
      expect(await run(fileWithEveryProblem())).toEqual({ ok: false, error: "invalid import file", problems: reader.ok ? [] : reader.problems });
      expect(await store.list()).toEqual(before.list);
      expect(await store.dataVersion()).toBe(before.version);

      expect(await run(fleet)).toEqual({ ok: true, imported: 12_000 });
      expect(await store.list()).toHaveLength(12_000 + before.list.filter((a) => a.id > 12_000).length);
      await resetAgents(db);
    });

    it("upsert carries every character a text field may hold through COPY, exactly", async () => {
      const store = await resetAgents(db, []);
      // COPY's text format reserves backslash, tab, newline and carriage return; \N is its NULL.
      const awkward = ["tab\there", "line\nbreak", "back\\slash \\N", "\\N", "cr\rlf", "café ☕ 𝄞 \"quoted\" 'single'", "trailing space "];
      const agents: AgentRecord[] = awkward.map((reason, i) => ({ ...loggedIn(i + 1), paused: true, paused_reason: reason, context: reason.slice(0, 80) }));
      agents.push({ ...loggedIn(99), extension: "\\", state_interface: "PJSIP/a\\b" });
      await store.upsert(agents);
      const byId = new Map((await store.list()).map((a) => [a.id, a]));
      for (const agent of agents) expect(byId.get(agent.id)).toMatchObject({ paused_reason: agent.paused_reason, context: agent.context, extension: agent.extension, state_interface: agent.state_interface });
      await resetAgents(db);
    });

    it("upsert sends one COPY per batch of 10,000 agents, and a DELETE only of the ids that may be stored", async () => {
      const store = await resetAgents(db, []);
      const sent: string[] = [];
      // The real database, recording the start of every statement an import sends.
      const counting = insideTransactions(db, (tx) => ({
        query: (text, params) => {
          sent.push(text.trim().split(/\s+/).slice(0, 2).join(" "));
          return tx.query(text, params);
        },
        copyIn: (table, columns, text) => {
          sent.push(`COPY ${table}`);
          return tx.copyIn(table, columns, text);
        },
      }));
      const fleet = Array.from({ length: 25_000 }, (_, i) => ((i + 1) % 7 === 0 ? loggedOut(i + 1) : loggedIn(i + 1)));
      // The last of two rows with one id wins, as with one statement per row.
      fleet.push({ ...loggedIn(3), paused: true, paused_reason: "last wins" });
      await new SqlAgentStore(counting, store.originUuid).upsert(fleet);
      // Into an empty table: COPY alone, but id 3 of the last batch was written by the first.
      expect(sent).toEqual(["LOCK TABLE", "SELECT min(id)", "COPY agents", "COPY agents", "DELETE FROM", "COPY agents"]);
      const rows = await store.list();
      expect(rows).toHaveLength(25_000);
      expect(rows[2]).toMatchObject({ id: 3, paused: true, paused_reason: "last wins" });
      expect(rows[6]).toMatchObject({ id: 7, logged: false, extension: null, context: null, state_interface: null });
      expect(rows[24_999]).toMatchObject({ id: 25_000, number: "26000", state_interface: "PJSIP/agent25000" });

      // Again, over itself: every batch's ids are in the stored range.
      sent.length = 0;
      await new SqlAgentStore(counting, store.originUuid).upsert(fleet.map((agent) => (agent.logged ? { ...agent, context: "again" } : agent)));
      expect(sent).toEqual(["LOCK TABLE", "SELECT min(id)", ...Array.from({ length: 3 }, () => ["DELETE FROM", "COPY agents"]).flat()]);
      expect(await store.list()).toHaveLength(25_000);
      expect(await store.getById(24_999)).toMatchObject({ context: "again" });
      await resetAgents(db);
    });

    it("upsert from batches: a source that fails rolls back what was written, and its failure wins over the database's", async () => {
      const store = await resetAgents(db, [loggedIn(1, "500")]);
      const before = { list: await store.list(), version: await store.dataVersion() };
      let copies = 0;
      // The real database, whose second COPY fails.
      const failing = insideTransactions(db, (tx) => ({
        query: (text, params) => tx.query(text, params),
        copyIn: (table, columns, text) => (++copies === 2 ? Promise.reject(new Error("copy refused")) : tx.copyIn(table, columns, text)),
      }));
      let read = 0;
      async function* batches(fail: Error | null) {
        for (let start = 2; start < 50; start += 10) {
          await new Promise((resolve) => setImmediate(resolve));
          read++;
          yield Array.from({ length: 10 }, (_, i) => loggedIn(start + i));
        }
        if (fail) throw fail;
      }
      const invalid = new Error("invalid file");
      await expect(store.upsert(batches(invalid))).rejects.toBe(invalid);
      expect(await store.list()).toEqual(before.list);

      // A COPY refused on the way: the source is read to its end all the same, and its failure is the one reported.
      await expect(new SqlAgentStore(failing, store.originUuid).upsert(batches(invalid))).rejects.toBe(invalid);
      expect(read).toBe(10);
      copies = 0;
      await expect(new SqlAgentStore(failing, store.originUuid).upsert(batches(null))).rejects.toThrow("copy refused");
      expect(read).toBe(15);
      expect(await store.list()).toEqual(before.list);
      expect(await store.dataVersion()).toBe(before.version);

      await store.upsert(batches(null));
      expect(await store.list()).toHaveLength(51);
      await resetAgents(db);
    });

    it("the data version moves with every committed write to the agents, and only then", async () => {
      const store = await resetAgents(db);
      const version = () => store.dataVersion();
      let before = await version();
      const moved = async (what: string, write: () => Promise<unknown>) => {
        await write();
        const after = await version();
        expect(after, what).not.toBe(before);
        before = after;
      };
      await moved("pause", () => store.pause("1001", "v"));
      await moved("pause with the same reason", () => store.pause("1001", "v"));
      await moved("unpause", () => store.unpause("1001"));
      await moved("unpause of an agent that is not paused", () => store.unpause("1001"));
      await moved("import", () => store.upsert([loggedIn(7)]));
      await moved("an update by hand", () => db.query("UPDATE agents SET paused = false, paused_reason = NULL WHERE id = 1"));
      await moved("a delete by hand", () => db.query("DELETE FROM agents WHERE id = 7"));

      expect(await store.pause("1002", "logged out")).toBe("not logged in");
      expect(await store.pause("9999", null)).toBe("no such agent");
      expect(await store.unpause("1002")).toBe("not logged in");
      expect(await store.unpause("9999")).toBe("no such agent");
      await expect(db.transaction(async (tx) => {
        await new SqlAgentStore(tx, store.originUuid).pause("1005", "rolled back");
        await new SqlAgentStore(tx, store.originUuid).unpause("1003");
        throw new Error("boom");
      })).rejects.toThrow("boom");
      expect(await version(), "refused pauses and unpauses and rolled-back ones").toBe(before);
      expect(await store.getByNumber("1003")).toMatchObject({ paused: true, paused_reason: "lunch break" });
    });

    it("a transaction that throws changes nothing", async () => {
      const store = await resetAgents(db);
      await expect(
        db.transaction(async (tx) => {
          await new SqlAgentStore(tx, store.originUuid).pause("1001", "inside");
          throw new Error("boom");
        }),
      ).rejects.toThrow("boom");
      expect(await store.getByNumber("1001")).toMatchObject({ paused: false, paused_reason: null });
    });

    it("origin_uuid is generated once, stable across reopen, and overridable", async () => {
      const first = await readOriginUuid(db, null);
      expect(first).toMatch(UUID);
      await reopen();
      expect(await readOriginUuid(db, null)).toBe(first);
      const override = "6f1c3c6e-2b7a-4f5e-9a0d-3c2b1a0f9e8d";
      expect(await readOriginUuid(db, override)).toBe(override);
      const store = await resetAgents(db);
      const overridden = new SqlAgentStore(db, override);
      expect((await overridden.list()).every((a) => a.origin_uuid === override)).toBe(true);
      expect((await store.list()).every((a) => a.origin_uuid === first)).toBe(true);
      // The stored one is untouched by the override.
      expect(await readOriginUuid(db, null)).toBe(first);
    });

    it("pauses and tokens persist across close and reopen", async () => {
      const store = await resetAgents(db);
      expect(await store.pause("1005", "persisted")).toBe("paused");
      const token = await new SqlTokenStore(db).create(["agentd.agents.read"], null);
      await reopen();
      const again = new SqlAgentStore(db, await readOriginUuid(db, null));
      expect(await again.getByNumber("1005")).toMatchObject({ paused: true, paused_reason: "persisted" });
      expect(await new SqlTokenStore(db).find(token)).toEqual({ acls: ["agentd.agents.read"], expiresAt: null });
    });

    it("tokens: only the SHA-256 is stored; find, ensure, revoke, count", async () => {
      await db.query("DELETE FROM tokens");
      const now = Date.UTC(2030, 0, 1);
      const tokens = new SqlTokenStore(db, () => now);
      expect(await tokens.count()).toBe(0);

      const token = await tokens.create(["agentd.agents.read", "agentd.agents.by-id.*.read"], 3600);
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(await tokens.find(token)).toEqual({
        acls: ["agentd.agents.read", "agentd.agents.by-id.*.read"],
        expiresAt: new Date(now + 3_600_000),
      });
      const rows = await db.query<{ token_hash: string }>("SELECT * FROM tokens");
      expect(rows.map((r) => r.token_hash)).toEqual([createHash("sha256").update(token).digest("hex")]);
      expect(JSON.stringify(rows)).not.toContain(token);
      expect(await tokens.find(token.slice(1))).toBeUndefined();
      await expect(tokens.create(["agentd.#"], 0)).rejects.toThrow(RangeError);

      const admin = "my-scripted-admin-token";
      await tokens.ensure(admin, ["agentd.agents.read"]);
      await tokens.ensure(admin, ["agentd.#"]);
      expect(await tokens.find(admin)).toEqual({ acls: ["agentd.#"], expiresAt: null });
      expect(await tokens.count()).toBe(2);
      expect(JSON.stringify(await db.query("SELECT * FROM tokens"))).not.toContain(admin);
      expect(await db.query("SELECT 1 FROM tokens WHERE token_hash = $1", [hashToken(admin)])).toHaveLength(1);

      expect(await tokens.revoke(token)).toBe(true);
      expect(await tokens.revoke(token)).toBe(false);
      expect(await tokens.find(token)).toBeUndefined();
      expect(await tokens.count()).toBe(1);
    });

    it("import: a good file upserts every agent, origin_uuid ignored", async () => {
      const store = await resetAgents(db, [loggedIn(1, "500")]);
      const file = [
        { ...loggedIn(1, "501"), paused: true, paused_reason: "training" },
        { ...loggedOut(7), origin_uuid: "6f1c3c6e-2b7a-4f5e-9a0d-3c2b1a0f9e8d" },
      ];
      expect(await runAdmin({ op: "import", text: JSON.stringify(file) }, { tokens: new SqlTokenStore(db), store })).toEqual({ ok: true, imported: 2 });
      expect(await store.list()).toEqual([
        { ...file[0], origin_uuid: store.originUuid },
        { ...loggedOut(7), origin_uuid: store.originUuid },
      ]);
    });

    it("import: a file the database refuses changes nothing", async () => {
      const store = await resetAgents(db, [loggedIn(1, "500"), loggedIn(2, "600")]);
      const before = await store.list();
      // Valid on its own, but 600 belongs to agent 2, which the file does not move.
      const text = JSON.stringify([loggedIn(1, "501"), loggedIn(3, "700"), loggedIn(4, "600")]);
      expect(await readImport(text)).toMatchObject({ ok: true });
      await expect(runAdmin({ op: "import", text }, { tokens: new SqlTokenStore(db), store })).rejects.toThrow();
      expect(await store.list()).toEqual(before);
    });
  });
});

/** An import file with one of each problem the reader reports, after a good agent (11 problems). */
function fileWithEveryProblem(): unknown[] {
  const good = loggedIn(1);
  return [
    good,
    { ...loggedIn(2), id: 0 },
    { ...loggedIn(3), number: "12a" },
    { ...loggedOut(4), paused: true },
    { ...loggedIn(5), id: 1 },
    { ...loggedIn(6), foo: "bar" },
    (({ context: _, ...rest }) => rest)(loggedIn(7)),
    { ...loggedIn(8), origin_uuid: "not-a-uuid" },
    { ...loggedOut(9), extension: "9" },
    { ...loggedIn(10), paused_reason: "no pause" },
    { ...loggedIn(11), number: "1001" },
    "not an object",
  ];
}

describe("import file validation", () => {
  it("reports every problem with its position and returns no agents", async () => {
    const file = fileWithEveryProblem();
    const parsed = await readImport(JSON.stringify(file, null, 2));
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems).toEqual(
      expect.arrayContaining([
        "[1].id: must be >= 1",
        '[2].number: must match pattern "^[0-9]+$"',
        "[3].paused: must be false when logged is false",
        '[4].id: duplicate id 1 (first at [0])',
        "[5].foo: is not an agent field",
        "[6].context: is required",
        '[7].origin_uuid: must match format "uuid"',
        "[8].extension: must be null when logged is false",
        "[9].paused_reason: must be null when paused is false",
        '[10].number: duplicate number "1001" (first at [0])',
        "[11]: must be object",
      ]),
    );
    expect(parsed.problems).toHaveLength(11);
    expect(parsed.problems.some((p) => p.startsWith("[0]"))).toBe(false);
  });

  it("rejects what is not a JSON array of agents", async () => {
    expect(await readImport("[{")).toEqual({ ok: false, problems: [expect.stringMatching(/^\(file\): not valid JSON/)] });
    expect(await readImport('{"id": 1}')).toEqual({ ok: false, problems: ["(file): must be array"] });
    expect(await readImport("[]")).toEqual({ ok: true, agents: [] });
  });

  it("reads the contract from the repository root, from server/ and from dist/server/", () => {
    const contract = path.join(repoRoot, "openapi.yaml");
    expect(findContract()).toBe(contract);
    expect(findContract(path.join(repoRoot, "dist", "server", "store"))).toBe(contract);
  });

  it("follows the contract: a schema read at run time, not a copy", async () => {
    // A contract whose agent numbers may hold letters accepts "12a".
    const { readFile, mkdtemp } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const original = await readFile(path.join(repoRoot, "openapi.yaml"), "utf8");
    const yaml = original.replace(
      /(\n {4}AgentNumber:\n {6}type: string\n {6}pattern: )"\^\[0-9\]\+\$"/,
      '$1"^[0-9a-z]+$"',
    );
    expect(yaml).not.toBe(original);
    const dir = await mkdtemp(path.join(tmpdir(), "agentd-contract-"));
    await writeFile(path.join(dir, "openapi.yaml"), yaml);
    const text = JSON.stringify([{ ...loggedIn(1), number: "12a" }]);
    expect((await readImport(text)).ok).toBe(false);
    expect((await readImport(text, path.join(dir, "openapi.yaml"))).ok).toBe(true);
  });
});

describe("PGlite COPY", () => {
  it("goes in COPYs of at most 10,000 rows, in one transaction, letting the event loop turn between them", async () => {
    const t = await freshPglite();
    const db = await t.openMigrated();
    try {
      await db.query("CREATE TABLE copy_rows (id integer PRIMARY KEY, value text)");
      // Every value holds an escaped newline, which must not be taken for a row's end.
      const line = (id: number) => `${id}\tline\\nbreak ${id}\n`;
      const text = Array.from({ length: 25_000 }, (_, i) => line(i + 1)).join("");
      // One COPY of 25,000 rows runs without a single turn of the event loop (PGlite's WASM does not yield).
      let turns = 0;
      let spinning = true;
      const spin = () => {
        if (!spinning) return;
        turns++;
        setImmediate(spin);
      };
      setImmediate(spin);
      await db.copyIn("copy_rows", ["id", "value"], text);
      spinning = false;
      expect(turns).toBeGreaterThanOrEqual(2);
      expect(await db.query("SELECT count(*)::int AS n, max(id) AS top FROM copy_rows")).toEqual([{ n: 25_000, top: 25_000 }]);
      expect(await db.query("SELECT value FROM copy_rows WHERE id = 10001")).toEqual([{ value: "line\nbreak 10001" }]);

      // A row refused in the last chunk undoes the chunks before it.
      const refused = Array.from({ length: 25_000 }, (_, i) => line(i + 30_001)).join("") + line(30_001);
      await expect(db.copyIn("copy_rows", ["id", "value"], refused)).rejects.toThrow(/duplicate key|copy_rows_pkey/);
      expect(await db.query("SELECT count(*)::int AS n FROM copy_rows")).toEqual([{ n: 25_000 }]);
    } finally {
      await db.close();
      await t.cleanup();
    }
  });
});

describe("PGlite upkeep", () => {
  it("the embedded database vacuums the agents after each import, so re-imports do not grow the table", async () => {
    const t = await freshPglite();
    const loaded = loadConfig({ AGENTD_DATA_DIR: t.location }, t.location);
    if (!loaded.ok) throw new Error(loaded.errors.join("; "));
    const state = await openStores(loaded.config, pino({ level: "silent" }));
    try {
      const text = JSON.stringify(Array.from({ length: 5_000 }, (_, i) => loggedIn(i + 1)));
      const stats = async () =>
        (
          await state.db.query<{ vacuums: number; bytes: number }>(
            "SELECT vacuum_count::int AS vacuums, pg_relation_size('agents')::int AS bytes FROM pg_stat_user_tables WHERE relname = 'agents'",
          )
        )[0]!;
      expect(await runAdmin({ op: "import", text }, state)).toEqual({ ok: true, imported: 5_000 });
      const first = await stats();
      // Each re-import replaces all 5,000 agents: 5,000 dead rows that the VACUUM after it frees for the next.
      for (let i = 0; i < 4; i++) expect(await runAdmin({ op: "import", text }, state)).toEqual({ ok: true, imported: 5_000 });
      const last = await stats();
      expect(last.vacuums).toBe(first.vacuums + 4);
      // Without the VACUUM the table grew to 4.6 times its size after the first import (measured); with it, it stays the same.
      expect(last.bytes).toBeLessThanOrEqual(first.bytes * 1.5);
    } finally {
      await state.db.close();
      await t.cleanup();
    }
  });
});

describe("PGlite durability", () => {
  it("a pause whose promise resolved survives kill -9 of the process", async () => {
    const t = await freshPglite();
    try {
      const seeded = await t.openMigrated();
      await seedDemoAgents(new SqlAgentStore(seeded, await readOriginUuid(seeded, null)));
      await seeded.close();

      const child = path.join(t.location, "child.mjs");
      const module = (file: string) => JSON.stringify(pathToFileURL(path.join(repoRoot, file)).href);
      await writeFile(
        child,
        `import { openPglite } from ${module("server/db/pglite.ts")};
         import { SqlAgentStore } from ${module("server/store/sql-agent-store.ts")};
         const db = await openPglite(process.argv[2]);
         const store = new SqlAgentStore(db, "00000000-0000-4000-8000-000000000000");
         const outcome = await store.pause("1001", "killed right after");
         process.stdout.write(outcome + "\\n");
         setInterval(() => {}, 1000); // stay alive until killed
        `,
      );
      const proc = spawn(process.execPath, ["--import", "tsx", child, t.location], {
        cwd: repoRoot,
        stdio: ["ignore", "pipe", "inherit"],
      });
      const exited = new Promise<NodeJS.Signals | null>((resolve) => proc.on("exit", (_code, signal) => resolve(signal)));
      const line = await new Promise<string>((resolve, reject) => {
        let out = "";
        proc.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes("\n")) {
            proc.kill("SIGKILL");
            resolve(out.trim());
          }
        });
        proc.on("exit", () => reject(new Error(`child exited early: ${out}`)));
      });
      expect(line).toBe("paused");
      expect(await exited).toBe("SIGKILL");

      const db = await t.openMigrated();
      const store = new SqlAgentStore(db, await readOriginUuid(db, null));
      expect(await store.getByNumber("1001")).toMatchObject({ paused: true, paused_reason: "killed right after" });
    } finally {
      await t.cleanup();
    }
  });
});

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
    expect(applied.flat().sort()).toEqual(MIGRATIONS.map((_, i) => i + 1));
    expect(applied.filter((a) => a.length > 0)).toHaveLength(1);
    const [db] = dbs;
    expect(await db.query("SELECT version FROM schema_migrations")).toHaveLength(MIGRATIONS.length);
    const uuids = await Promise.all(dbs.map((d) => readOriginUuid(d, null)));
    expect(new Set(uuids).size).toBe(1);
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
