// Three server instances on one PostgreSQL database (issue 5): under
// concurrent pause load on the same and different agents, every answer is
// the one the state dictates, and the final state equals a serial replay of
// the pauses in the order the database committed them.
//
// The commit order is recorded by the test itself: a trigger on the test
// database's `agents` table appends every row update to `pause_log` (a
// sequence taken inside the updating transaction; the row lock of UPDATE
// makes updates of one agent take their numbers in commit order). Each
// request carries a unique reason, so every log row names its request.
//
// And freshness (issue 11), now that each instance reuses its list while
// the data version stands: 1,000 rounds of pause-then-read across
// instances, and an import through the CLI, are never read stale.
// Needs AGENTD_TEST_DATABASE_URL (fails in CI without it).
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentRecord, AgentStatus } from "../server/store/agent-store.js";
import { SqlAgentStore } from "../server/store/sql-agent-store.js";
import { readOriginUuid } from "../server/store/deployment.js";
import { loggedIn, loggedOut, paused } from "./helpers/agents.js";
import { expectValid, loadContract } from "./helpers/contract.js";
import { freshPostgres, postgresTestUrl, type TestDatabase } from "./helpers/databases.js";
import { runAgentd } from "./helpers/process.js";
import { startTestServer, type Answer, type TestServer } from "./helpers/server.js";

const contract = loadContract();
const pgUrl = postgresTestUrl();

// Numbers 3001 to 3012: every fourth agent is logged out; 3003 starts paused with a reason.
const AGENTS: AgentRecord[] = Array.from({ length: 12 }, (_, i) => {
  const id = i + 1;
  const number = String(3000 + id);
  return id % 4 === 0 ? loggedOut(id, number) : id === 3 ? paused(id, "initial", number) : loggedIn(id, number);
});
const UNKNOWN = ["3999", "4001", "30010"];
const HOT = "3001";

/** mulberry32: a small seeded generator, so a failing run can be replayed with its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Runs `tasks` with at most `limit` in flight. */
async function pool<T>(tasks: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < tasks.length) {
        const index = next++;
        results[index] = await tasks[index]!();
      }
    }),
  );
  return results;
}

describe.skipIf(pgUrl === undefined)("three instances on one PostgreSQL", () => {
  let db: TestDatabase;
  let admin: pg.Client;
  let originUuid: string;
  let instances: TestServer[] = [];

  beforeAll(async () => {
    db = await freshPostgres();
    const handle = await db.openMigrated();
    originUuid = await readOriginUuid(handle, null);
    await new SqlAgentStore(handle, originUuid).upsert(AGENTS);
    await handle.close();

    admin = new pg.Client({ connectionString: db.location });
    await admin.connect();
    await admin.query("CREATE TABLE pause_log (seq bigserial PRIMARY KEY, number text NOT NULL, paused boolean NOT NULL, reason text)");
    await admin.query(`CREATE FUNCTION log_pause() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO pause_log (number, paused, reason) VALUES (NEW.number, NEW.paused, NEW.paused_reason);
        RETURN NEW;
      END $$`);
    await admin.query("CREATE TRIGGER agents_pause_log AFTER UPDATE ON agents FOR EACH ROW EXECUTE FUNCTION log_pause()");

    // Started at once, as a deployment's instances would be (migrations and
    // the admin token are made sure of concurrently). Each has its own data
    // directory, for its TLS material only.
    instances = await Promise.all([1, 2, 3].map(() => startTestServer({ AGENTD_DATABASE_URL: db.location })));
  });
  afterAll(async () => {
    await Promise.all(instances.map((s) => s.close()));
    await admin?.end();
    await db?.cleanup();
  });

  async function state(server: TestServer): Promise<AgentStatus[]> {
    const answer = await server.call("GET", "/agents");
    expect(answer.status).toBe(200);
    return expectValid(contract.responseValidator("listAgents", 200), answer.json as AgentStatus[]);
  }

  it("agree on origin_uuid: the one stored with the database", async () => {
    for (const server of instances) {
      const agents = await state(server);
      expect(new Set(agents.map((a) => a.origin_uuid))).toEqual(new Set([originUuid]));
      expect((await server.call("GET", "/agents/by-id/1")).json.origin_uuid).toBe(originUuid);
    }
  });

  it("a pause through one instance is visible through the others at once", async () => {
    for (let i = 0; i < 6; i++) {
      const writer = instances[i % 3]!;
      const reason = `visible ${i}`;
      expect((await writer.call("POST", "/agents/by-number/3002/pause", { body: { reason } })).status).toBe(204);
      for (const reader of instances) {
        if (reader === writer) continue;
        expect((await reader.call("GET", "/agents/by-number/3002")).json).toMatchObject({ paused: true, paused_reason: reason });
        expect((await reader.call("GET", "/agents/by-id/2")).json).toMatchObject({ paused: true, paused_reason: reason });
      }
    }
  });

  it("1,000 rounds of a pause through one instance then reads through the other two: never stale", async () => {
    // Each round changes the agent (a new reason, or none after one), and
    // the writer rotates, so every instance's cached list is outdated by
    // another's write 666 times. Reads go through the list (the cached
    // path).
    const number = "3002";
    for (let round = 0; round < 1000; round++) {
      const writer = instances[round % 3]!;
      const reason = round % 2 === 0 ? `round ${round}` : null;
      const paused = await writer.call("POST", `/agents/by-number/${number}/pause`, { body: reason === null ? {} : { reason } });
      expect(paused.status, `round ${round}`).toBe(204);
      for (const reader of instances) {
        if (reader === writer) continue;
        const list = (await reader.call("GET", "/agents")).json as AgentStatus[];
        expect(list.find((agent) => agent.number === number), `round ${round}`).toMatchObject({ paused: true, paused_reason: reason });
        // By number (always a query on PostgreSQL) too, on every tenth round, to keep the test short.
        if (round % 10 === 0) {
          expect((await reader.call("GET", `/agents/by-number/${number}`)).json, `round ${round}`).toMatchObject({ paused_reason: reason });
        }
      }
    }
  }, 300_000);

  it("an import through the CLI is seen at once by every instance", async () => {
    // Every instance has a list cached; what the import does not name must stay as read here.
    const [before] = await Promise.all(instances.map((server) => state(server)));
    const imported: AgentRecord[] = [paused(5, "imported", "3005"), loggedIn(13, "3013"), loggedOut(14, "3014")];
    const dir = await mkdtemp(path.join(tmpdir(), "agentd-import-"));
    try {
      const file = path.join(dir, "agents.json");
      await writeFile(file, JSON.stringify(imported));
      const result = await runAgentd(["import", file], { AGENTD_DATABASE_URL: db.location }, { cwd: dir });
      expect(result.code, result.stderr).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const byId = new Map(imported.map((a) => [a.id, a]));
    for (const server of instances) {
      const agents = await state(server);
      expect(agents.map((a) => a.id)).toEqual([...Array(14).keys()].map((i) => i + 1));
      for (const agent of agents) {
        const named = byId.get(agent.id);
        expect(agent).toEqual(named === undefined ? before![agent.id - 1] : { ...named, origin_uuid: originUuid });
      }
      expect((await server.call("GET", "/agents/by-number/3013")).json).toEqual({ ...byId.get(13), origin_uuid: originUuid });
    }
  }, 120_000);

  /** A seeded round over the current state: the log emptied, the agents sorted by whether they are logged in. */
  async function concurrentRound() {
    const seed = Number(process.env.AGENTD_TEST_SEED ?? Date.now() % 2 ** 31);
    const next = random(seed);
    const context = `seed ${seed} (replay with AGENTD_TEST_SEED=${seed})`;
    await admin.query("TRUNCATE pause_log");
    const initial = await state(instances[0]!);
    return {
      next,
      context,
      initial,
      byNumber: new Map(initial.map((a) => [a.number, a])),
      loggedIn: initial.filter((a) => a.logged).map((a) => a.number),
      loggedOut: initial.filter((a) => !a.logged).map((a) => a.number),
      pick: <T,>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!,
    };
  }

  it("300 concurrent pauses across instances: each answer as the state dictates, final state = serial replay in commit order", async () => {
    const { next, context, initial, byNumber, loggedIn, loggedOut, pick } = await concurrentRound();

    const requests = Array.from({ length: 300 }, (_, i) => {
      const roll = next();
      // A third on one hot agent (contention), the rest spread, with logged-out and unknown numbers mixed in.
      const number = roll < 0.3 ? HOT : roll < 0.7 ? pick(loggedIn) : roll < 0.85 ? pick(loggedOut) : pick(UNKNOWN);
      return { i, number, reason: `r${i}-${Math.floor(next() * 1e6)}`, via: Math.floor(next() * instances.length) };
    });
    const answers = await pool(
      requests.map((r) => () => instances[r.via]!.call("POST", `/agents/by-number/${r.number}/pause`, { body: { reason: r.reason } })),
      24,
    );

    // Every answer is what the agent's state dictates (logged-in agents stay logged in: pauses never log out).
    const accepted = new Map<string, Set<string>>();
    answers.forEach((answer: Answer, index) => {
      const r = requests[index]!;
      const known = byNumber.get(r.number);
      const expected = known === undefined ? 404 : known.logged ? 204 : 409;
      expect(answer.status, `${context}: pause ${r.number} via instance ${r.via}: ${answer.text}`).toBe(expected);
      if (expected === 204) {
        expect(answer.text).toBe("");
        if (!accepted.has(r.number)) accepted.set(r.number, new Set());
        accepted.get(r.number)!.add(r.reason);
      } else {
        const error = expected === 404 ? "no such agent" : "not logged in";
        expect(answer.json, context).toEqual({ error });
        expectValid(contract.responseValidator("pauseAgentByNumber", expected), answer.json);
      }
    });
    expect(accepted.get(HOT)?.size ?? 0, context).toBeGreaterThan(50);

    // The database applied exactly the accepted pauses, each once, and nothing else.
    const { rows: log } = await admin.query<{ seq: string; number: string; paused: boolean; reason: string | null }>(
      "SELECT seq, number, paused, reason FROM pause_log ORDER BY seq",
    );
    const logged = new Map<string, string[]>();
    for (const row of log) {
      expect(row.paused).toBe(true);
      if (!logged.has(row.number)) logged.set(row.number, []);
      logged.get(row.number)!.push(row.reason!);
    }
    expect(log.length, context).toBe([...accepted.values()].reduce((n, s) => n + s.size, 0));
    for (const [number, reasons] of logged) {
      expect([...reasons].sort(), `${context}: agent ${number}`).toEqual([...(accepted.get(number) ?? [])].sort());
    }

    // Serial replay of the log, in commit order, on the initial state.
    const replay = new Map(initial.map((a) => [a.number, { ...a }]));
    for (const row of log) Object.assign(replay.get(row.number)!, { paused: true, paused_reason: row.reason });
    const expected = [...replay.values()];

    const finals = await Promise.all(instances.map(state));
    for (const final of finals) expect(final, context).toEqual(expected);
    for (const agent of finals[0]!) {
      const reasons = accepted.get(agent.number);
      if (reasons) expect(reasons.has(agent.paused_reason!), `${context}: ${agent.number}`).toBe(true);
      else expect(agent, context).toEqual(byNumber.get(agent.number));
    }
  });
  it("300 concurrent pauses and unpauses across instances: each answer as the state dictates, final state = serial replay in commit order", async () => {
    const { next, context, initial, byNumber, loggedIn, loggedOut, pick } = await concurrentRound();

    // Half pauses (each with a unique reason, so its log row names it), half unpauses.
    const requests = Array.from({ length: 300 }, (_, i) => {
      const roll = next();
      const number = roll < 0.3 ? HOT : roll < 0.7 ? pick(loggedIn) : roll < 0.85 ? pick(loggedOut) : pick(UNKNOWN);
      const action = next() < 0.5 ? "pause" : "unpause";
      return { i, number, action, reason: `r${i}-${Math.floor(next() * 1e6)}`, via: Math.floor(next() * instances.length) };
    });
    const answers = await pool(
      requests.map((r) => () =>
        instances[r.via]!.call("POST", `/agents/by-number/${r.number}/${r.action}`, r.action === "pause" ? { body: { reason: r.reason } } : {}),
      ),
      24,
    );

    const pauses = new Map<string, Set<string>>();
    const unpauses = new Map<string, number>();
    answers.forEach((answer: Answer, index) => {
      const r = requests[index]!;
      const known = byNumber.get(r.number);
      const expected = known === undefined ? 404 : known.logged ? 204 : 409;
      const operationId = r.action === "pause" ? "pauseAgentByNumber" : "unpauseAgentByNumber";
      expect(answer.status, `${context}: ${r.action} ${r.number} via instance ${r.via}: ${answer.text}`).toBe(expected);
      if (expected === 204) {
        expect(answer.text).toBe("");
        if (r.action === "pause") {
          if (!pauses.has(r.number)) pauses.set(r.number, new Set());
          pauses.get(r.number)!.add(r.reason);
        } else {
          unpauses.set(r.number, (unpauses.get(r.number) ?? 0) + 1);
        }
      } else {
        expect(answer.json, context).toEqual({ error: expected === 404 ? "no such agent" : "not logged in" });
        expectValid(contract.responseValidator(operationId, expected), answer.json);
      }
    });
    expect(unpauses.get(HOT) ?? 0, context).toBeGreaterThan(20);

    // The database applied exactly the accepted pauses and unpauses, each once, and nothing else.
    const { rows: log } = await admin.query<{ seq: string; number: string; paused: boolean; reason: string | null }>(
      "SELECT seq, number, paused, reason FROM pause_log ORDER BY seq",
    );
    const loggedPauses = new Map<string, string[]>();
    const loggedUnpauses = new Map<string, number>();
    for (const row of log) {
      if (row.paused) {
        if (!loggedPauses.has(row.number)) loggedPauses.set(row.number, []);
        loggedPauses.get(row.number)!.push(row.reason!);
      } else {
        expect(row.reason, context).toBeNull();
        loggedUnpauses.set(row.number, (loggedUnpauses.get(row.number) ?? 0) + 1);
      }
    }
    for (const number of new Set([...pauses.keys(), ...loggedPauses.keys()])) {
      expect([...(loggedPauses.get(number) ?? [])].sort(), `${context}: pauses of ${number}`).toEqual([...(pauses.get(number) ?? [])].sort());
    }
    expect(Object.fromEntries(loggedUnpauses), `${context}: unpauses`).toEqual(Object.fromEntries(unpauses));

    // Serial replay of the log, in commit order, on the initial state.
    const replay = new Map(initial.map((a) => [a.number, { ...a }]));
    for (const row of log) Object.assign(replay.get(row.number)!, { paused: row.paused, paused_reason: row.reason });
    const expected = [...replay.values()];
    const finals = await Promise.all(instances.map(state));
    for (const final of finals) expect(final, context).toEqual(expected);
  });
});
