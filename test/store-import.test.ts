// The import file (`agentd import`): the reader alone, and imports through
// the store on the embedded PGlite and on PostgreSQL (AGENTD_TEST_DATABASE_URL;
// required in CI): a good file commits, a bad one writes nothing.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../devkit/root.js";
import { type Database } from "../server/db/sql.js";
import { InvalidImportError, type AgentRecord } from "../server/store/agent-store.js";
import { SqlAgentStore } from "../server/store/sql-agent-store.js";
import { readOriginUuid } from "../server/store/deployment.js";
import { importBatches } from "../server/store/agent-import-reader.js";
import { runAdmin } from "../server/admin/run-admin.js";
import { findContract } from "../server/contract.js";
import { DEMO_AGENTS } from "../server/store/seed.js";
import { SqlTokenStore } from "../server/store/sql-token-store.js";
import { loggedIn, loggedOut } from "./helpers/agents.js";
import { availableKinds, type TestDatabase } from "./helpers/databases.js";

async function resetAgents(db: Database, agents: readonly AgentRecord[] = DEMO_AGENTS): Promise<SqlAgentStore> {
  await db.query("DELETE FROM agents");
  const store = new SqlAgentStore(db, await readOriginUuid(db, null));
  await store.upsert(agents);
  return store;
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
  console.warn(`store-import.test.ts: skipping ${missing.join(", ")}: set AGENTD_TEST_DATABASE_URL to run it`);
}

describe.each(kinds)("import through the store on $kind", ({ fresh, available }) => {
  let t: TestDatabase;
  let db: Database;

  beforeAll(async () => {
    if (!available) return;
    t = await fresh();
    db = await t.openMigrated();
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  describe.skipIf(!available)("", () => {
    it("agentd import commits a valid file and writes nothing of an invalid one, whatever its values", async () => {
      const store = await resetAgents(db);
      const tokens = new SqlTokenStore(db);
      const before = { list: await store.list(), version: await store.dataVersion() };
      const run = (file: unknown) => runAdmin({ op: "import", text: JSON.stringify(file) }, { tokens, store, db, configuredSinks: [], authUrl: null });
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

    it("import: a good file upserts every agent, origin_uuid ignored", async () => {
      const store = await resetAgents(db, [loggedIn(1, "500")]);
      const file = [
        { ...loggedIn(1, "501"), paused: true, paused_reason: "training" },
        { ...loggedOut(7), origin_uuid: "6f1c3c6e-2b7a-4f5e-9a0d-3c2b1a0f9e8d" },
      ];
      expect(await runAdmin({ op: "import", text: JSON.stringify(file) }, { tokens: new SqlTokenStore(db), store, db, configuredSinks: [], authUrl: null })).toEqual({ ok: true, imported: 2 });
      expect(await store.list()).toEqual([
        { ...file[0], origin_uuid: store.originUuid },
        { ...loggedOut(7), origin_uuid: store.originUuid },
      ]);
    });

    it("import: a number another stored agent keeps is reported with its position, and changes nothing", async () => {
      const store = await resetAgents(db, [loggedIn(1, "500"), loggedIn(2, "600"), loggedIn(3, "800")]);
      const before = await store.list();
      const version = await store.dataVersion();
      // Valid on its own, but 600 and 800 belong to agents 2 and 3, which the
      // file does not name; 500 moves from agent 1, which it does.
      const file = [loggedIn(1, "501"), loggedIn(5, "700"), loggedIn(4, "600"), loggedIn(6, "500"), loggedIn(7, "800")];
      const text = JSON.stringify(file);
      expect(await readImport(text)).toMatchObject({ ok: true });
      expect(await runAdmin({ op: "import", text }, { tokens: new SqlTokenStore(db), store, db, configuredSinks: [], authUrl: null })).toEqual({
        ok: false,
        error: "invalid import file",
        problems: [
          '[2].number: number "600" is kept by agent 2, which the file does not name',
          '[4].number: number "800" is kept by agent 3, which the file does not name',
        ],
      });
      expect(await store.list()).toEqual(before);
      expect(await store.dataVersion()).toBe(version);
      // Once the file names them too, the numbers move.
      const moved = [...file, loggedIn(2, "601"), loggedIn(3, "801")];
      expect(await runAdmin({ op: "import", text: JSON.stringify(moved) }, { tokens: new SqlTokenStore(db), store, db, configuredSinks: [], authUrl: null })).toEqual({ ok: true, imported: 7 });
      expect((await store.getByNumber("600"))?.id).toBe(4);
    });
  });
});

/** An import file with one of each problem the reader reports, after a good agent (12 problems). */
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
    { ...loggedIn(13), paused: true, paused_reason: "a\ud800b" },
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
        "[12].paused_reason: must be well-formed Unicode (no lone surrogate)",
      ]),
    );
    expect(parsed.problems).toHaveLength(12);
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
