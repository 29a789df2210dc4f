// A 100,000-agent fleet (issue 11), on each store: pausing the agents at
// both ends through the API, after every instance has cached the list,
// gives the same bodies as a fresh read from the database. On PostgreSQL
// there are two instances (pause through one, read through both) and the
// fresh read runs beside them; PGlite belongs to one process, so its fresh
// read opens the data directory after the server stopped.
// The fleet is bulk-imported with the store's batched upsert, not looped.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentRecord, AgentStatus } from "../server/store/agent-store.js";
import { readOriginUuid } from "../server/store/deployment.js";
import { SqlAgentStore } from "../server/store/sql-agent-store.js";
import { availableKinds, type TestDatabase } from "./helpers/databases.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const FLEET = 100_000;

function fleetAgent(id: number): AgentRecord {
  const number = String(500_000 + id);
  // Every fifth agent is logged out, except the two at the ends, which get paused.
  return id % 5 === 0 && id !== FLEET
    ? { id, number, extension: null, context: null, logged: false, paused: false, paused_reason: null, state_interface: null }
    : { id, number, extension: number, context: "default", logged: true, paused: false, paused_reason: null, state_interface: `PJSIP/a${id}` };
}

const FIRST = fleetAgent(1).number;
const LAST = fleetAgent(FLEET).number;

const kinds = availableKinds();
for (const { kind, available } of kinds) {
  if (!available) console.warn(`large-fleet.test.ts: skipping ${kind}: set AGENTD_TEST_DATABASE_URL to run it`);
}

describe.each(kinds)("a 100,000-agent fleet on $kind", ({ kind, fresh, available }) => {
  let t: TestDatabase;
  let originUuid: string;
  let instances: TestServer[] = [];

  beforeAll(async () => {
    if (!available) return;
    t = await fresh();
    const db = await t.openMigrated();
    try {
      originUuid = await readOriginUuid(db, null);
      await new SqlAgentStore(db, originUuid).upsert(Array.from({ length: FLEET }, (_, i) => fleetAgent(i + 1)));
    } finally {
      await db.close();
    }
    const env: Record<string, string> = kind === "postgres" ? { AGENTD_DATABASE_URL: t.location } : { AGENTD_DATA_DIR: t.location };
    instances = await Promise.all((kind === "postgres" ? [1, 2] : [1]).map(() => startTestServer(env)));
  }, 300_000);
  afterAll(async () => {
    await Promise.all(instances.map((server) => server.close()));
    await t?.cleanup();
  });

  it.skipIf(!available)("pausing both ends answers exactly what a fresh read of the database holds", async () => {
    for (const server of instances) {
      const warm = await server.call("GET", "/agents");
      expect(warm.status).toBe(200);
      expect(warm.json).toHaveLength(FLEET);
    }
    const writer = instances[0]!;
    expect((await writer.call("POST", `/agents/by-number/${FIRST}/pause`, { body: { reason: "first" } })).status).toBe(204);
    expect((await writer.call("POST", `/agents/by-number/${LAST}/pause`, { body: {} })).status).toBe(204);

    const served = [];
    for (const server of instances) {
      served.push({
        list: (await server.call("GET", "/agents")).text,
        first: (await server.call("GET", `/agents/by-number/${FIRST}`)).text,
        last: (await server.call("GET", `/agents/by-id/${FLEET}`)).text,
      });
    }
    // PGlite: one process at a time, so the fresh read comes after the server let go.
    if (kind === "pglite") await Promise.all(instances.splice(0).map((server) => server.close()));

    const db = await t.open();
    try {
      const store = new SqlAgentStore(db, originUuid);
      const list: AgentStatus[] = await store.list();
      const first = await store.getByNumber(FIRST);
      const last = await store.getById(FLEET);
      expect(first).toMatchObject({ paused: true, paused_reason: "first" });
      expect(last).toMatchObject({ paused: true, paused_reason: null });
      expect(list).toHaveLength(FLEET);
      for (const body of served) {
        expect(body.first).toBe(JSON.stringify(first));
        expect(body.last).toBe(JSON.stringify(last));
        // Compared as text: 20 MB of JSON, byte for byte.
        expect(body.list === JSON.stringify(list)).toBe(true);
      }
    } finally {
      await db.close();
    }
  }, 300_000);
});
