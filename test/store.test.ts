// The agent and token stores against real databases: the same suite on the
// embedded PGlite and on PostgreSQL (AGENTD_TEST_DATABASE_URL; required in
// CI). The import file is in store-import.test.ts, what only PGlite shows in
// pglite.test.ts, what only PostgreSQL shows in store-postgres.test.ts.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate, MIGRATIONS } from "../server/db/migrations.js";
import { type Database, type Sql } from "../server/db/sql.js";
import type { AgentRecord } from "../server/store/agent-store.js";
import { SqlAgentStore } from "../server/store/sql-agent-store.js";
import { readOriginUuid } from "../server/store/deployment.js";
import { DEMO_AGENTS } from "../server/store/seed.js";
import { hashToken, newToken, RetiredAdminTokenError, SqlTokenStore } from "../server/store/sql-token-store.js";
import { loggedIn, loggedOut } from "./helpers/agents.js";
import { loadContract } from "./helpers/contract.js";
import { availableKinds, type TestDatabase } from "./helpers/databases.js";

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

describe("newToken", () => {
  it("never starts with '-', which a command line would read as an option: it draws again", () => {
    // 0xF8 encodes to "-" as the first base64url character.
    const draws = [Buffer.alloc(32, 0xf8), Buffer.alloc(32, 0x41)];
    const token = newToken(() => draws.shift()!);
    expect(token).toBe(Buffer.alloc(32, 0x41).toString("base64url"));
    expect(draws).toEqual([]);
    expect(newToken()).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{42}$/);
  });
});

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
      await expect(store.upsert([loggedIn(4, "800"), loggedIn(5, "700")])).rejects.toThrow(
        expect.objectContaining({ problems: ['[1].number: number "700" is kept by agent 3, which the file does not name'] }),
      );
      expect((await store.list()).map((a) => a.id)).toEqual([1, 2, 3]);
    });

    it("upsert with replace makes the source the whole fleet: the others removed in the same transaction, their numbers free for the source's agents", async () => {
      const store = await resetAgents(db, [loggedIn(1, "1001"), loggedIn(2, "1002"), loggedOut(3, "1003")]);
      // Agent 9 takes number 1001 from agent 1, which the source does not name.
      expect(await store.upsert([loggedIn(2, "2002"), loggedIn(9, "1001")], { replace: true })).toEqual({ removed: 2 });
      expect((await store.list()).map((a) => [a.id, a.number])).toEqual([
        [2, "2002"],
        [9, "1001"],
      ]);
      expect(await store.upsert([loggedIn(2, "2002"), loggedIn(9, "1001")], { replace: true })).toEqual({ removed: 0 });
      // Without replace, an agent the source does not name stays.
      expect(await store.upsert([loggedIn(5, "5005")])).toEqual({ removed: 0 });
      expect((await store.list()).map((a) => a.id)).toEqual([2, 5, 9]);
      // From batches, and rolled back with them when the source fails: nothing removed.
      async function* failing() {
        yield [loggedIn(2, "2002")];
        await new Promise((resolve) => setImmediate(resolve));
        throw new Error("the file broke");
      }
      await expect(store.upsert(failing(), { replace: true })).rejects.toThrow("the file broke");
      expect((await store.list()).map((a) => a.id)).toEqual([2, 5, 9]);
      async function* batches() {
        yield [loggedIn(5, "5005")];
        await new Promise((resolve) => setImmediate(resolve));
        yield [loggedIn(6, "6006")];
      }
      expect(await store.upsert(batches(), { replace: true })).toEqual({ removed: 2 });
      expect((await store.list()).map((a) => a.id)).toEqual([5, 6]);
      // Replacing the fleet with none is refused, from an array or from batches, and removes nothing.
      async function* none() {
        await new Promise((resolve) => setImmediate(resolve));
        yield* [];
      }
      for (const source of [[], none()]) {
        await expect(store.upsert(source, { replace: true })).rejects.toThrow(expect.objectContaining({ problems: [expect.stringContaining("the file names no agent")] }));
      }
      expect((await store.list()).map((a) => a.id)).toEqual([5, 6]);
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
      const { token, id } = await new SqlTokenStore(db).create(["agentd.agents.read"], null);
      await reopen();
      const again = new SqlAgentStore(db, await readOriginUuid(db, null));
      expect(await again.getByNumber("1005")).toMatchObject({ paused: true, paused_reason: "persisted" });
      expect(await new SqlTokenStore(db).find(token)).toEqual({ id, acls: ["agentd.agents.read"], expiresAt: null });
    });

    it("tokens: only the SHA-256 is stored; find, ensure, revoke, list", async () => {
      await db.query("DELETE FROM tokens");
      const now = Date.UTC(2030, 0, 1);
      const tokens = new SqlTokenStore(db, () => now);
      expect((await tokens.list()).length).toBe(0);

      const { token, id } = await tokens.create(["agentd.agents.read", "agentd.agents.by-id.*.read"], 3600);
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(await tokens.find(token)).toEqual({
        id,
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
      expect(await tokens.find(admin)).toEqual({ id: expect.stringMatching(/^[0-9a-f]{12}$/), acls: ["agentd.#"], expiresAt: null });
      expect((await tokens.list()).length).toBe(2);
      expect(JSON.stringify(await db.query("SELECT * FROM tokens"))).not.toContain(admin);
      expect(await db.query("SELECT 1 FROM tokens WHERE token_hash = $1", [hashToken(admin)])).toHaveLength(1);

      expect(await tokens.revoke(token)).toBe(true);
      expect(await tokens.revoke(token)).toBe(false);
      expect(await tokens.find(token)).toBeUndefined();
      expect((await tokens.list()).length).toBe(1);
    });

    // From an operator's review: revoking every token, then restarting, made
    // (and printed) a new agentd.# token.
    it("tokens: the first admin token is made once in a deployment's life: once when several ask at once, never after any token was made, even all revoked", async () => {
      await db.query("DELETE FROM tokens");
      await db.query("DELETE FROM token_history");
      const tokens = new SqlTokenStore(db);
      const made = await Promise.all([tokens.createFirst(["agentd.#"]), tokens.createFirst(["agentd.#"]), tokens.createFirst(["agentd.#"])]);
      const first = made.filter((one) => one !== null);
      expect(first).toHaveLength(1);
      expect(await tokens.find(first[0]!.token)).toEqual({ id: first[0]!.id, acls: ["agentd.#"], expiresAt: null });
      expect(await tokens.revokeById(first[0]!.id)).toBe(true);
      expect((await tokens.list()).length).toBe(0);
      expect(await tokens.createFirst(["agentd.#"])).toBeNull();

      // An INSERT that adds no row (as a data-only restore of no token) is not a token made.
      await db.query("DELETE FROM token_history");
      await db.query("INSERT INTO tokens (token_hash, acls) SELECT token_hash, acls FROM tokens WHERE false");
      expect(await db.query("SELECT 1 FROM token_history")).toHaveLength(0);

      // Any other way a token is made counts as having had one.
      for (const make of [() => tokens.create(["agentd.agents.read"], null), () => tokens.ensure("scripted-admin-token-0123456789", ["agentd.#"])]) {
        await db.query("DELETE FROM tokens");
        await db.query("DELETE FROM token_history");
        await make();
        await db.query("DELETE FROM tokens");
        expect(await tokens.createFirst(["agentd.#"])).toBeNull();
      }
      expect((await tokens.list()).length).toBe(0);
    });

    // What migration 10's backfill reads: a deployment that had a token before it.
    const hadOne: [string, (tokens: SqlTokenStore, older: Database) => Promise<unknown>][] = [
      ["a token", (tokens) => tokens.create(["agentd.#"], null)],
      [
        "an AGENTD_ADMIN_TOKEN that was replaced, though no token is left",
        async (tokens, older) => {
          await tokens.ensure("first-value-of-the-variable-0123", ["agentd.#"]);
          await tokens.ensure("second-value-of-the-variable-0123", ["agentd.#"]);
          await older.query("DELETE FROM tokens");
        },
      ],
    ];
    it.each(hadOne)("tokens: a deployment migrated to version 10 with %s has had one", async (_what, before) => {
      const other = await fresh();
      const older = await other.open();
      try {
        await migrate(older, MIGRATIONS.slice(0, 9));
        const tokens = new SqlTokenStore(older);
        await before(tokens, older);
        await migrate(older);
        await older.query("DELETE FROM tokens");
        expect(await tokens.createFirst(["agentd.#"])).toBeNull();
      } finally {
        await older.close();
        await other.cleanup();
      }
    });

    // From the operator walkthrough: a new AGENTD_ADMIN_TOKEN left the old one valid for ever.
    it("tokens: a new AGENTD_ADMIN_TOKEN (ensure) revokes the previous value's token, and no other; the old value cannot come back", async () => {
      await db.query("DELETE FROM tokens");
      await db.query("DELETE FROM retired_admin_tokens");
      const tokens = new SqlTokenStore(db);
      const other = await tokens.create(["agentd.#"], null);
      await tokens.ensure("first-admin-token-0123456789", ["agentd.#"]);
      // A restart with the same value: one read, no write.
      const statements: string[] = [];
      const watched = {
        query: <R extends object>(text: string, params?: readonly unknown[]) => (statements.push(text), db.query<R>(text, params)),
        transaction: <T>(fn: (tx: Sql) => Promise<T>) => (statements.push("transaction"), db.transaction(fn)),
        copyIn: (table: string, columns: readonly string[], text: string) => db.copyIn(table, columns, text),
      };
      expect(await new SqlTokenStore(watched).ensure("first-admin-token-0123456789", ["agentd.#"])).toEqual({ revokedIds: [] });
      expect(statements).toHaveLength(1);
      expect(statements[0]).toMatch(/^SELECT/);
      expect((await tokens.list()).length).toBe(2);

      const firstId = (await tokens.find("first-admin-token-0123456789"))?.id;
      expect(firstId).toMatch(/^[0-9a-f]{12}$/);
      expect(await tokens.ensure("second-admin-token-0123456789", ["agentd.#"])).toEqual({ revokedIds: [firstId] });
      expect(await tokens.find("first-admin-token-0123456789")).toBeUndefined();
      expect(await tokens.find("second-admin-token-0123456789")).toMatchObject({ acls: ["agentd.#"], expiresAt: null });
      expect(await tokens.find(other.token)).toMatchObject({ id: other.id });
      // An old configuration restored: refused, and nothing changes.
      await expect(tokens.ensure("first-admin-token-0123456789", ["agentd.#"])).rejects.toThrow(RetiredAdminTokenError);
      expect(await tokens.find("first-admin-token-0123456789")).toBeUndefined();
      expect(await tokens.find("second-admin-token-0123456789")).toBeDefined();

      // A token the variable made before migration 8 is not known as its: left alone.
      await db.query("UPDATE tokens SET from_variable = false");
      await tokens.ensure("third-admin-token-0123456789", ["agentd.#"]);
      expect(await tokens.find("second-admin-token-0123456789")).toBeDefined();
      expect((await tokens.list()).length).toBe(3);
    });

    it("tokens: a short random id each, listed without the secret or its hash, and revocable by id", async () => {
      await db.query("DELETE FROM tokens");
      const now = Date.UTC(2030, 0, 1);
      const tokens = new SqlTokenStore(db, () => now);
      const reader = await tokens.create(["agentd.agents.read"], 3600);
      const admin = await tokens.create(["agentd.#"], null);
      await tokens.ensure("my-scripted-admin-token", ["agentd.#"]);
      expect(reader.id).toMatch(/^[0-9a-f]{12}$/);
      expect(admin.id).toMatch(/^[0-9a-f]{12}$/);

      const listed = await tokens.list();
      expect(listed).toHaveLength(3);
      expect(new Set(listed.map((t) => t.id)).size).toBe(3);
      expect(listed.find((t) => t.id === reader.id)).toEqual({
        id: reader.id,
        acls: ["agentd.agents.read"],
        expiresAt: new Date(now + 3_600_000),
        createdAt: expect.any(Date),
      });
      expect(listed.find((t) => t.id === admin.id)).toMatchObject({ acls: ["agentd.#"], expiresAt: null });
      const text = JSON.stringify(listed);
      for (const secret of [reader.token, admin.token, "my-scripted-admin-token"]) {
        expect(text).not.toContain(secret);
        expect(text).not.toContain(hashToken(secret).slice(0, 12));
      }

      expect(await tokens.revokeById(reader.id)).toBe(true);
      expect(await tokens.revokeById(reader.id)).toBe(false);
      expect(await tokens.find(reader.token)).toBeUndefined();
      expect(await tokens.find(admin.token)).toBeDefined();
      expect((await tokens.list()).map((t) => t.id)).not.toContain(reader.id);
    });

  });
});
