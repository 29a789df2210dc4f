// The in-process caches of the embedded database, over a real PGlite: they
// must answer exactly what the database holds, with fewer queries.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Database, Sql } from "../server/db/sql.js";
import { CachedAgentStore } from "../server/store/cached-agent-store.js";
import { CachedTokenStore } from "../server/store/cached-token-store.js";
import { SqlAgentStore } from "../server/store/sql-agent-store.js";
import { SqlTokenStore } from "../server/store/sql-token-store.js";
import { loggedIn, SUITE_AGENTS, suiteAgents } from "./helpers/agents.js";
import { freshPglite, type TestDatabase } from "./helpers/databases.js";

const ORIGIN = "6f1c3c6e-2b7a-4f5e-9a0d-3c2b1a0f9e8d";
const { pausable, away, onBreak, bystander } = SUITE_AGENTS;

/** The real database, counting the statements that reach it. */
function counting(db: Database): Sql & { count: number } {
  const counter = {
    count: 0,
    query: <R extends object>(text: string, params?: readonly unknown[]) => {
      counter.count++;
      return db.query<R>(text, params);
    },
    transaction: <T>(fn: (tx: Sql) => Promise<T>) => {
      counter.count++;
      return db.transaction(fn);
    },
    copyIn: (table: string, columns: readonly string[], text: string) => {
      counter.count++;
      return db.copyIn(table, columns, text);
    },
  };
  return counter;
}

describe("CachedAgentStore on PGlite", () => {
  let testDb: TestDatabase;
  let db: Database;
  beforeEach(async () => {
    testDb = await freshPglite();
    db = await testDb.openMigrated();
    await new SqlAgentStore(db, ORIGIN).upsert(suiteAgents());
  });
  afterEach(async () => testDb.cleanup());

  it("reads the table once, then answers from memory exactly what the database holds", async () => {
    const sql = counting(db);
    const direct = new SqlAgentStore(db, ORIGIN);
    const cached = new CachedAgentStore(new SqlAgentStore(sql, ORIGIN));
    expect(await cached.list()).toEqual(await direct.list());
    expect(await cached.getById(onBreak.id)).toEqual(await direct.getById(onBreak.id));
    expect(await cached.getByNumber(bystander.number)).toEqual(await direct.getByNumber(bystander.number));
    expect(await cached.getById(999)).toBeUndefined();
    expect(await cached.getByNumber("999")).toBeUndefined();
    expect(sql.count).toBe(1);
  });

  it("shows a committed pause at once, and stays equal to the database under concurrent pauses", async () => {
    const direct = new SqlAgentStore(db, ORIGIN);
    const cached = new CachedAgentStore(new SqlAgentStore(db, ORIGIN));
    await cached.list();
    const outcomes = await Promise.all(
      Array.from({ length: 60 }, (_, i) => cached.pause([pausable.number, away.number, bystander.number, "9999"][i % 4]!, i % 3 === 0 ? null : `reason ${i}`)),
    );
    expect(new Set(outcomes)).toEqual(new Set(["paused", "not logged in", "no such agent"]));
    expect(await cached.list()).toEqual(await direct.list());
    expect((await cached.getByNumber(pausable.number))?.paused).toBe(true);
    expect(await cached.getByNumber(away.number)).toEqual(await direct.getByNumber(away.number));
  });

  it("a pause replaces only its agent: every other object and the list's order stay, and the list is rebuilt once", async () => {
    const direct = new SqlAgentStore(db, ORIGIN);
    const cached = new CachedAgentStore(new SqlAgentStore(db, ORIGIN));
    const before = await cached.list();
    expect(await cached.list()).toBe(before);
    expect(await cached.pause("1005", "only me")).toBe("paused");
    const after = await cached.list();
    expect(after).not.toBe(before);
    expect(await cached.list()).toBe(after);
    expect(after).toEqual(await direct.list());
    after.forEach((agent, i) => {
      if (agent.number === "1005") expect(agent).not.toBe(before[i]);
      else expect(agent).toBe(before[i]);
    });
    expect(await cached.getById(5)).toBe(await cached.getByNumber("1005"));
  });

  it("shows a committed unpause at once, and stays equal to the database under concurrent pauses and unpauses", async () => {
    const direct = new SqlAgentStore(db, ORIGIN);
    const cached = new CachedAgentStore(new SqlAgentStore(db, ORIGIN));
    await cached.list();
    expect(await cached.unpause(onBreak.number)).toBe("unpaused");
    expect(await cached.getByNumber(onBreak.number)).toMatchObject({ paused: false, paused_reason: null });
    expect(await cached.getByNumber(onBreak.number)).toEqual(await direct.getByNumber(onBreak.number));
    const numbers = [pausable.number, away.number, bystander.number, onBreak.number, "9999"];
    const outcomes = await Promise.all(
      Array.from({ length: 60 }, (_, i) => {
        const number = numbers[i % numbers.length]!;
        return i % 2 === 0 ? cached.pause(number, i % 3 === 0 ? null : `reason ${i}`) : cached.unpause(number);
      }),
    );
    expect(new Set(outcomes)).toEqual(new Set(["paused", "unpaused", "not logged in", "no such agent"]));
    expect(await cached.list()).toEqual(await direct.list());
    for (const number of numbers) expect(await cached.getByNumber(number)).toEqual(await direct.getByNumber(number));
  });

  it("an unpause replaces only its agent, and the list is rebuilt once", async () => {
    const direct = new SqlAgentStore(db, ORIGIN);
    const cached = new CachedAgentStore(new SqlAgentStore(db, ORIGIN));
    const before = await cached.list();
    expect(await cached.unpause(onBreak.number)).toBe("unpaused");
    const after = await cached.list();
    expect(after).not.toBe(before);
    expect(await cached.list()).toBe(after);
    expect(after).toEqual(await direct.list());
    after.forEach((agent, i) => {
      if (agent.number === onBreak.number) expect(agent).not.toBe(before[i]);
      else expect(agent).toBe(before[i]);
    });
    // A refused unpause leaves the list as it is.
    expect(await cached.unpause(away.number)).toBe("not logged in");
    expect(await cached.list()).toBe(after);
  });

  it("with event sinks, a pause that changes nothing never hides an unpause that committed after it", async () => {
    const sinks = { sinks: ["webhook http://x"] };
    const direct = new SqlAgentStore(db, ORIGIN);
    const cached = new CachedAgentStore(new SqlAgentStore(db, ORIGIN, sinks));
    await cached.list();
    expect(await cached.pause(pausable.number, "a")).toBe("paused");
    // PGlite runs one statement at a time: the repeated pause's write (a
    // no-op), then the unpause, then the pause's second question. Its
    // answer comes after the unpause's.
    const [again, unpaused] = await Promise.all([cached.pause(pausable.number, "a"), cached.unpause(pausable.number)]);
    expect([again, unpaused]).toEqual(["unchanged", "unpaused"]);
    expect(await direct.getByNumber(pausable.number)).toMatchObject({ paused: false, paused_reason: null });
    expect(await cached.getByNumber(pausable.number)).toEqual(await direct.getByNumber(pausable.number));
    expect(await cached.list()).toEqual(await direct.list());
    // And the other way round: an unpause that changes nothing never hides a pause.
    const [still, paused] = await Promise.all([cached.unpause(pausable.number), cached.pause(pausable.number, "b")]);
    expect([still, paused]).toEqual(["unchanged", "paused"]);
    expect(await cached.getByNumber(pausable.number)).toMatchObject({ paused: true, paused_reason: "b" });
    expect(await cached.list()).toEqual(await direct.list());
  });

  it("an unpause while the first load is under way is not lost", async () => {
    const direct = new SqlAgentStore(db, ORIGIN);
    const cached = new CachedAgentStore(new SqlAgentStore(db, ORIGIN));
    const [list, outcome] = await Promise.all([cached.list(), cached.unpause(onBreak.number)]);
    expect(outcome).toBe("unpaused");
    expect(await cached.getByNumber(onBreak.number)).toMatchObject({ paused: false, paused_reason: null });
    expect(await cached.list()).toEqual(await direct.list());
    expect(list.length).toBe(suiteAgents().length);
  });

  it("reloads after an import, and after a failed one", async () => {
    const direct = new SqlAgentStore(db, ORIGIN);
    const cached = new CachedAgentStore(new SqlAgentStore(db, ORIGIN));
    await cached.list();
    await cached.upsert([loggedIn(40, "4040")]);
    expect((await cached.getByNumber("4040"))?.id).toBe(40);
    // A duplicate number fails the whole import: nothing changes, and the cache still matches.
    await expect(cached.upsert([loggedIn(41, "4040")])).rejects.toThrow();
    expect(await cached.list()).toEqual(await direct.list());
  });
});

describe("CachedTokenStore on PGlite", () => {
  let testDb: TestDatabase;
  let db: Database;
  beforeEach(async () => {
    testDb = await freshPglite();
    db = await testDb.openMigrated();
  });
  afterEach(async () => testDb.cleanup());

  it("remembers known and unknown tokens, and forgets them on every change", async () => {
    const sql = counting(db);
    const tokens = new CachedTokenStore(new SqlTokenStore(sql), 100);
    const token = (await tokens.create(["agentd.agents.read"], null)).token;
    sql.count = 0;
    for (let i = 0; i < 5; i++) {
      expect((await tokens.find(token))?.acls).toEqual(["agentd.agents.read"]);
      expect(await tokens.find("made-up")).toBeUndefined();
    }
    expect(sql.count).toBe(2);

    expect(await tokens.revoke(token)).toBe(true);
    expect(await tokens.find(token)).toBeUndefined();

    await tokens.ensure("made-up", ["agentd.#"]);
    expect((await tokens.find("made-up"))?.acls).toEqual(["agentd.#"]);
  });

  it("keeps at most its size in memory under a flood of unknown tokens", async () => {
    const sql = counting(db);
    const tokens = new CachedTokenStore(new SqlTokenStore(sql), 10);
    for (let i = 0; i < 50; i++) await tokens.find(`flood-${i}`);
    sql.count = 0;
    await tokens.find("flood-0");
    expect(sql.count).toBe(1);
  });

  it("keeps a known token under a flood of unknown ones: they have a cache of their own", async () => {
    const sql = counting(db);
    const tokens = new CachedTokenStore(new SqlTokenStore(sql), 10);
    const token = (await tokens.create(["agentd.agents.read"], null)).token;
    expect(await tokens.find(token)).toBeDefined();
    for (let i = 0; i < 50; i++) await tokens.find(`flood-${i}`);
    sql.count = 0;
    expect((await tokens.find(token))?.acls).toEqual(["agentd.agents.read"]);
    expect(sql.count).toBe(0);
  });
});
