// The events agent_paused / agent_unpaused, through real parts: the server
// over HTTPS, the machine's RabbitMQ, a real HTTP receiver, the contract's
// webhook schemas.
import { randomBytes } from "node:crypto";
import amqp from "amqplib";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import pino from "pino";
import { agentChangeParams, agentChangeStatement } from "../server/store/agent-change.js";
import { DatabaseUnavailableError, type Sql } from "../server/db/sql.js";
import { BusSink } from "../server/events/bus-sink.js";
import { Relay, type RelayOptions } from "../server/events/relay.js";
import { DeliveryRefused, webhookSinkName } from "../server/events/sink.js";
import { WebhookSink } from "../server/events/webhook-sink.js";
import { SqlAgentStore } from "../server/store/sql-agent-store.js";
import { loggedIn, paused } from "./helpers/agents.js";
import { expectValid, loadContract } from "./helpers/contract.js";
import { freshPglite } from "./helpers/databases.js";
import { consume, ensureRabbit, RABBIT_URL, type BusConsumer } from "./helpers/rabbit.js";
import { startTestServer, type TestServer } from "./helpers/server.js";
import { startTcpProxy } from "./helpers/tcp-proxy.js";
import { startWebhookReceiver, type WebhookReceiver } from "./helpers/webhook-receiver.js";

const contract = loadContract();
const pausedSchema = contract.schemaValidator("AgentPausedEvent");
const unpausedSchema = contract.schemaValidator("AgentUnpausedEvent");
const SECRET = `whsec_${randomBytes(32).toString("base64")}`;
const ORIGIN = "6f1c3c6e-2b7a-4f5e-9a0d-3c2b1a0f9e8d";
const AGENTS = [loggedIn(1), loggedIn(2), paused(3, "lunch break")];

const pause = (server: TestServer, number: string, reason?: string) =>
  server.call("POST", `/agents/by-number/${number}/pause`, reason === undefined ? {} : { body: { reason } });

/** A fresh exchange per test, so concurrent runs and earlier tests do not mix. */
const freshExchange = () => `agentd-test-${randomBytes(4).toString("hex")}`;

beforeAll(ensureRabbit, 90_000);

describe("the outbox, in the store", () => {
  it("records an event only when a sink is configured and the pause changed the state; unpause plugs in", async () => {
    const database = await freshPglite();
    const db = await database.openMigrated();
    try {
      const count = async () => (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM event_outbox"))[0]!.n;
      const origin = ORIGIN;
      const silent = new SqlAgentStore(db, origin);
      await silent.upsert(AGENTS);
      expect(await silent.pause("1001", "a")).toBe("paused");
      expect(await count()).toBe(0);

      let recorded = 0;
      const store = new SqlAgentStore(db, origin, { sinks: ["bus", "webhook http://x"], recorded: () => recorded++ });
      expect(await store.pause("1001", "a")).toBe("unchanged"); // the same state: nothing written, answered 204 all the same
      expect([await count(), recorded]).toEqual([0, 0]);
      expect(await store.pause("1001", "b")).toBe("paused"); // another reason
      expect(await store.pause("1001", null)).toBe("paused"); // reason cleared
      expect(await store.pause("1002", null)).toBe("paused"); // paused
      expect(await store.pause("9999", null)).toBe("no such agent");
      expect(recorded).toBe(3);
      const rows = await db.query<{ event_id: string; sink: string; payload: string }>("SELECT event_id::text, sink, payload FROM event_outbox ORDER BY seq");
      expect(rows.map((r) => r.sink)).toEqual(["bus", "webhook http://x", "bus", "webhook http://x", "bus", "webhook http://x"]);
      expect(rows[0]!.event_id).toBe(rows[1]!.event_id);
      expect(new Set(rows.map((r) => r.event_id)).size).toBe(3);
      const bodies = rows.filter((r) => r.sink === "bus").map((r) => expectValid(pausedSchema, JSON.parse(r.payload) as unknown));
      expect(bodies.map((b) => (b as { data: { paused_reason: string } }).data.paused_reason)).toEqual(["b", "", ""]);

      // Unpause: the same statement with the other event.
      const unpause = agentChangeStatement("agent_unpaused");
      const unpaused = agentChangeParams("1003", { paused: false, reason: null }, origin, ["bus"]);
      expect(await db.query(unpause, unpaused)).toEqual([{ id: 3 }]);
      expect(await db.query(unpause, unpaused)).toEqual([{ id: null }]); // already unpaused: nothing
      const [last] = await db.query<{ payload: string }>("SELECT payload FROM event_outbox WHERE name = 'agent_unpaused'");
      expect(JSON.parse(last!.payload)).toEqual({
        name: "agent_unpaused",
        origin_uuid: origin,
        data: { agent_id: 3, agent_number: "1003", queue: null, paused: false, paused_reason: "" },
        required_acl: "events.statuses.agents",
      });
      expectValid(unpausedSchema, JSON.parse(last!.payload) as unknown);
    } finally {
      await db.close();
      await database.cleanup();
    }
  });

  it("an instance not yet upgraded past migration 4 still records events with its own statement, as a rolling deployment needs", async () => {
    const database = await freshPglite();
    const db = await database.openMigrated();
    try {
      await new SqlAgentStore(db, ORIGIN).upsert(AGENTS);
      // Migration 4's statement, as an older agentd sends it: the database makes the event id.
      const older = "SELECT agent_change_with_event($1::text, $2::boolean, $3::text, 'agent_paused', $4::text, $5::text[]) AS id";
      expect(await db.query(older, ["1001", true, "a", ORIGIN, ["bus", "webhook http://x"]])).toEqual([{ id: 1 }]);
      expect(await db.query(older, ["1001", true, "a", ORIGIN, ["bus"]])).toEqual([{ id: null }]);
      // And this one's, with its own event id.
      const store = new SqlAgentStore(db, ORIGIN, { sinks: ["bus", "webhook http://x"] });
      expect(await store.pause("1002", "b")).toBe("paused");
      const rows = await db.query<{ event_id: string; agent_id: number; payload: string }>("SELECT event_id::text, agent_id, payload FROM event_outbox ORDER BY seq");
      expect(rows.map((r) => r.agent_id)).toEqual([1, 1, 2, 2]);
      expect(rows[0]!.event_id).toBe(rows[1]!.event_id);
      expect(rows[2]!.event_id).toBe(rows[3]!.event_id);
      expect(rows[0]!.event_id).not.toBe(rows[2]!.event_id);
      for (const row of rows) {
        expect(row.event_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        expectValid(pausedSchema, JSON.parse(row.payload) as unknown);
      }
    } finally {
      await db.close();
      await database.cleanup();
    }
  });
});

/** A relay of its own delivering `db`'s outbox to `receiver`, retrying within 50–200 ms. */
function webhookRelay(db: Sql, receiver: WebhookReceiver, options: Pick<RelayOptions, "pollMs" | "leaseMs" | "vacuumEvery">): Relay {
  const sink = new WebhookSink({ url: receiver.url, secret: SECRET, timeoutMs: 5_000 });
  return new Relay({ sql: db, sinks: [sink], logger: pino({ level: "silent" }), retryMinMs: 50, retryMaxMs: 200, ...options });
}

describe("the relay, in the process", () => {
  it("logs a database outage when it starts, once a minute while it lasts, and when it ends, not at every poll", async () => {
    const database = await freshPglite();
    const db = await database.openMigrated();
    const receiver = await startWebhookReceiver().catch(async (err: unknown) => {
      await db.close();
      await database.cleanup();
      throw err;
    });
    const lines: { msg: string; level: number }[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string; level: number }) });
    let down = true;
    let rounds = 0;
    let clock = 1_000_000;
    const flaky: Sql = {
      ...db,
      query: (...args: Parameters<Sql["query"]>) => {
        rounds++;
        return down ? Promise.reject(new DatabaseUnavailableError("connect ECONNREFUSED")) : db.query(...args);
      },
    };
    const sink = new WebhookSink({ url: receiver.url, secret: SECRET, timeoutMs: 5_000 });
    const relay = new Relay({ sql: flaky, sinks: [sink], logger, retryMinMs: 50, retryMaxMs: 200, pollMs: 20, leaseMs: 60_000, now: () => clock });
    const relayLines = () => lines.filter((l) => l.msg.startsWith("event relay: database")).map((l) => [l.level, l.msg]);
    const UNAVAILABLE = [40, "event relay: database unavailable, retrying"];
    try {
      // As on PostgreSQL (no start-up release of claims, which would meet the outage first): the loop is the same.
      await relay.start(false);
      await vi.waitFor(() => expect(rounds).toBeGreaterThanOrEqual(10), { timeout: 10_000, interval: 10 });
      expect(relayLines()).toEqual([UNAVAILABLE]);
      clock += 61_000;
      await vi.waitFor(() => expect(relayLines()).toEqual([UNAVAILABLE, UNAVAILABLE]), { timeout: 10_000, interval: 10 });
      down = false;
      await vi.waitFor(() => expect(relayLines()).toEqual([UNAVAILABLE, UNAVAILABLE, [30, "event relay: database available again"]]), { timeout: 10_000, interval: 10 });
    } finally {
      await relay.stop();
      await receiver.close();
      await db.close();
      await database.cleanup();
    }
  });

  it("logs a refused delivery with its receiver (no query), event id and the start of the answer (the query's values masked), keeps the connection, and counts the attempt for its backoff; the round goes on", async () => {
    const database = await freshPglite();
    const db = await database.openMigrated();
    const receiver = await startWebhookReceiver();
    receiver.answer = () => 422;
    // A receiver that says why, echoing the URL it was asked (query included), at some length.
    receiver.answerBody = `Cannot take POST /hooks?key=s3cret&v=s3cret%2Bplus: ${"x".repeat(2_000)}`;
    receiver.answerGapMs = 30;
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const url = `${receiver.url}?key=s3cret&v=s3cret%2Bplus`;
    const sink = new WebhookSink({ url, secret: SECRET, timeoutMs: 5_000 });
    const relay = new Relay({ sql: db, sinks: [sink], logger, retryMinMs: 50, retryMaxMs: 200, pollMs: 20, leaseMs: 60_000 });
    try {
      const store = new SqlAgentStore(db, ORIGIN, { sinks: [sink.name] });
      await store.upsert([loggedIn(1)]);
      expect(await store.pause("1001", "refused")).toBe("paused");
      const [row] = await db.query<{ event_id: string }>("SELECT event_id::text FROM event_outbox");
      await relay.start(true);
      await vi.waitFor(() => expect(receiver.received.length).toBeGreaterThanOrEqual(2), { timeout: 10_000, interval: 10 });
      // Each refusal was counted on the row (the backoff grows with it), not left for the next poll.
      await vi.waitFor(async () => expect((await db.query<{ attempts: number }>("SELECT attempts FROM event_outbox"))[0]!.attempts).toBeGreaterThanOrEqual(2), { timeout: 10_000, interval: 10 });
      const failures = lines.filter((l) => l.msg === "event delivery failed");
      expect(failures.length).toBeGreaterThanOrEqual(1);
      const { origin, pathname } = new URL(receiver.url);
      // The echoed query string is masked whole (answer-excerpt.test.ts has the other ways a secret comes back).
      const why = `Cannot take POST /hooks?… ${"x".repeat(200 - "Cannot take POST /hooks?… ".length)}`;
      expect(failures[0]).toMatchObject({ level: 40, sink: "webhook", to: `${origin}${pathname}?…`, event: row!.event_id, err: `webhook answered 422: ${why}` });
      expect(JSON.stringify(lines)).not.toContain("s3cret");
      const [stored] = await db.query<{ last_error: string }>("SELECT last_error FROM event_outbox");
      expect(stored!.last_error).toBe(`webhook answered 422: ${why}`);
      // The rest of the answer was read, not cut when the excerpt was had: the refusals came over one connection.
      expect(new Set(receiver.received.map((r) => r.remotePort)).size).toBe(1);
      expect(lines.filter((l) => l.msg === "event relay: round failed, retrying")).toEqual([]);
    } finally {
      await relay.stop();
      await receiver.close();
      await db.close();
      await database.cleanup();
    }
  });

  it("delivers different agents' events side by side, each agent's one at a time and in order, and vacuums the embedded outbox", async () => {
    const database = await freshPglite();
    const db = await database.openMigrated();
    const receiver = await startWebhookReceiver();
    receiver.delayMs = 20;
    const relay = webhookRelay(db, receiver, { pollMs: 50, leaseMs: 60_000, vacuumEvery: 10 });
    try {
      const store = new SqlAgentStore(db, ORIGIN, { sinks: [webhookSinkName(receiver.url)] });
      const agents = Array.from({ length: 8 }, (_, i) => loggedIn(i + 1));
      await store.upsert(agents);
      const reasons = ["a", "b", "c", "d", "e"];
      for (const reason of reasons) for (const agent of agents) expect(await store.pause(agent.number, reason)).toBe("paused");
      const vacuums = async () =>
        (await db.query<{ n: number }>("SELECT vacuum_count::int AS n FROM pg_stat_user_tables WHERE relname = 'event_outbox'"))[0]!.n;
      const vacuumsBefore = await vacuums();

      await relay.start(true);
      await vi.waitFor(() => expect(receiver.received.length, "deliveries").toBeGreaterThanOrEqual(40), { timeout: 30_000, interval: 25 });
      const delivered = receiver.received.map((r) => JSON.parse(r.body) as { data: { agent_number: string; paused_reason: string } });
      for (const agent of agents) {
        expect(delivered.filter((e) => e.data.agent_number === agent.number).map((e) => e.data.paused_reason)).toEqual(reasons);
      }
      expect(receiver.maxInFlight).toBeGreaterThan(1);
      expect(receiver.maxInFlightPerAgent).toBe(1);
      await expect.poll(async () => (await db.query("SELECT 1 FROM event_outbox")).length, { message: "events left in the outbox", timeout: 30_000, interval: 25 }).toBe(0);
      // PGlite runs no autovacuum: the relay vacuumed the outbox once its round had delivered `vacuumEvery` rows.
      expect(await vacuums()).toBeGreaterThan(vacuumsBefore);
    } finally {
      await relay.stop();
      await receiver.close();
      await db.close();
      await database.cleanup();
    }
  }, 60_000);
});

/** The agent number of a delivered event's body. */
const agentNumberOf = (body: string): string => (JSON.parse(body) as { data: { agent_number: string } }).data.agent_number;

/** What a relay test of this file works with: a fresh embedded outbox, its store, one receiver and a relay over it. */
interface RelayFixture {
  db: Sql;
  store: SqlAgentStore;
  receiver: WebhookReceiver;
  relay: Relay;
}

/**
 * Runs `test` with a relay delivering a fresh embedded outbox to one
 * receiver, agents 1001 and 1002 loaded, and closes everything after.
 * `options` are the relay's (retries of a minute unless said); `sql` wraps
 * the database the relay reads, to make it fail.
 */
async function withRelay(options: Partial<Omit<RelayOptions, "sql" | "sinks">> & { sql?: (db: Sql) => Sql }, test: (fixture: RelayFixture) => Promise<void>): Promise<void> {
  const database = await freshPglite();
  const db = await database.openMigrated();
  const receiver = await startWebhookReceiver();
  const sink = new WebhookSink({ url: receiver.url, secret: SECRET, timeoutMs: 5_000 });
  const { sql, ...relayOptions } = options;
  const relay = new Relay({ logger: pino({ level: "silent" }), retryMinMs: 60_000, retryMaxMs: 60_000, pollMs: 20, leaseMs: 60_000, ...relayOptions, sinks: [sink], sql: sql ? sql(db) : db });
  try {
    const store = new SqlAgentStore(db, ORIGIN, { sinks: [sink.name] });
    await store.upsert([loggedIn(1), loggedIn(2)]);
    await test({ db, store, receiver, relay });
  } finally {
    await relay.stop();
    await receiver.close();
    await db.close();
    await database.cleanup();
  }
}

/** The pause reasons of the events `receiver` got about agent `number`, in the order it got them. */
const reasonsTo = (receiver: WebhookReceiver, number: string): string[] =>
  receiver.received.filter((r) => agentNumberOf(r.body) === number).map((r) => (JSON.parse(r.body) as { data: { paused_reason: string } }).data.paused_reason);

describe("the relay, when one receiver or one event fails", () => {
  // A refused event waits a minute (withRelay's retries): the other agent's events must not wait with it.
  it("holds back only the agent of an event its receiver refused (a 4xx), not the other agents' events", () =>
    withRelay({}, async ({ db, store, receiver, relay }) => {
      // Deliveries overlap, so the other agent's later events are still to send when the refusal comes.
      receiver.delayMs = 30;
      receiver.answer = (_, body) => (agentNumberOf(body) === "1001" ? 422 : 204);
      expect(await store.pause("1001", "refused")).toBe("paused");
      expect(await store.unpause("1001")).toBe("unpaused");
      const reasons = ["a", "b", "c", "d", "e", "f"];
      for (const reason of reasons) expect(await store.pause("1002", reason)).toBe("paused");
      await relay.start(true);
      await vi.waitFor(() => expect(reasonsTo(receiver, "1002")).toEqual(reasons), { timeout: 20_000, interval: 20 });
      // Agent 1001's refused event waits for its retry, and its unpause behind it. (Agent 1002's
      // last row is deleted just after the receiver has it: its deletion is awaited, not assumed.)
      expect(receiver.received.filter((r) => agentNumberOf(r.body) === "1001").map((r) => r.status)).toEqual([422]);
      await vi.waitFor(
        async () =>
          expect(await db.query<{ name: string; attempts: number }>("SELECT name, attempts FROM event_outbox ORDER BY seq")).toEqual([
            { name: "agent_paused", attempts: 1 },
            { name: "agent_unpaused", attempts: 0 },
          ]),
        { timeout: 10_000, interval: 20 },
      );
    }), 40_000);

  // A claim reads the oldest rows, a window of twice its batch, or the next agents, twice its batch
  // of them: agents held back with more events queued than that, and more of them than that, must
  // not hide the other agents' events behind them. Embedded (reads) and leasing (PostgreSQL's claims).
  it.each([
    ["embedded", true],
    ["leasing", false],
  ])("holds back only the agents whose events were refused, however many events they have queued and however many of them (%s)", (_, embedded) =>
    withRelay({ batchSize: 2 }, async ({ db, store, receiver, relay }) => {
      await store.upsert([loggedIn(1), loggedIn(2), loggedIn(3), loggedIn(4), loggedIn(5), loggedIn(6)]);
      const refused = ["1001", "1002", "1003", "1004"];
      receiver.answer = (_, body) => (refused.includes(agentNumberOf(body)) ? 422 : 204);
      for (const number of refused) for (let i = 0; i < 6; i++) expect(await store.pause(number, `r${i}`)).toBe("paused");
      const reasons = ["a", "b", "c"];
      for (const number of ["1005", "1006"]) for (const reason of reasons) expect(await store.pause(number, reason)).toBe("paused");
      await relay.start(embedded);
      await vi.waitFor(
        () => {
          expect(reasonsTo(receiver, "1005")).toEqual(reasons);
          expect(reasonsTo(receiver, "1006")).toEqual(reasons);
        },
        { timeout: 10_000, interval: 20 },
      );
      // Each refused agent's first event was refused once and waits for its retry; the five behind it were never sent.
      for (const number of refused) expect(reasonsTo(receiver, number), number).toEqual(["r0"]);
      // Stopped: the deletions of what was delivered have ended.
      await relay.stop();
      const left = await db.query<{ agent_id: number; attempts: number }>("SELECT agent_id, attempts FROM event_outbox ORDER BY seq");
      expect(left.map((row) => [row.agent_id, row.attempts])).toEqual([1, 2, 3, 4].flatMap((id) => [[id, 1], ...Array.from({ length: 5 }, () => [id, 0])]));
    }), 40_000);

  // Behind a window the refused agent fills, the other agent's events go out by agent, a share of a
  // batch at a time: round after round, not one share per poll (a minute here: a sleep would show).
  it("drains another agent's queue behind a held agent's window without waiting for a poll between shares", () =>
    withRelay({ batchSize: 10, pollMs: 60_000 }, async ({ store, receiver, relay }) => {
      receiver.answer = (_, body) => (agentNumberOf(body) === "1001" ? 422 : 204);
      for (let i = 0; i < 25; i++) expect(await store.pause("1001", `r${i}`)).toBe("paused");
      const reasons = Array.from({ length: 30 }, (_, i) => `q${i}`);
      for (const reason of reasons) expect(await store.pause("1002", reason)).toBe("paused");
      await relay.start(true);
      await vi.waitFor(() => expect(reasonsTo(receiver, "1002")).toEqual(reasons), { timeout: 10_000, interval: 20 });
      expect(reasonsTo(receiver, "1001")).toEqual(["r0"]);
    }), 40_000);

  // A 5xx, and a 4xx that is about the receiver rather than the event (a wrong secret: 401).
  it.each([503, 401])("a %i makes the receiver look down: the other agents' events wait for its retry too", (status) =>
    withRelay({}, async ({ db, store, receiver, relay }) => {
      receiver.delayMs = 30;
      receiver.answer = (_, body) => (agentNumberOf(body) === "1001" ? status : 204);
      expect(await store.pause("1001", "refused")).toBe("paused");
      for (const reason of ["a", "b", "c", "d", "e", "f"]) expect(await store.pause("1002", reason)).toBe("paused");
      await relay.start(true);
      // Agent 1002's events not yet sent when the answer came wait for the retry with it.
      await vi.waitFor(async () => expect((await db.query<{ n: number }>("SELECT count(*)::int AS n FROM event_outbox WHERE agent_id = 2 AND not_before > now()"))[0]!.n).toBeGreaterThan(0), {
        timeout: 15_000,
        interval: 20,
      });
      expect(reasonsTo(receiver, "1002").length).toBeLessThan(6);
    }), 40_000);

  // The hold outlasts the round that found the receiver down: an event recorded meanwhile, of
  // any agent, waits for the retry too, and each retry sends one event, not one per agent.
  it("a receiver that looked down gets nothing before its retry, then one event at a time until it answers again", () =>
    withRelay({ retryMinMs: 150, retryMaxMs: 150 }, async ({ db, store, receiver, relay }) => {
      await store.upsert([loggedIn(3), loggedIn(4), loggedIn(5)]);
      let down = true;
      const arrivals: number[] = [];
      receiver.answer = () => {
        if (down) arrivals.push(performance.now());
        return down ? 503 : 204;
      };
      expect(await store.pause("1001", "first")).toBe("paused");
      await relay.start(true);
      await vi.waitFor(() => expect(arrivals.length).toBeGreaterThan(0), { timeout: 10_000, interval: 5 });
      // Each wakes the relay, as a pause through the API does.
      for (const number of ["1002", "1003", "1004", "1005"]) {
        expect(await store.pause(number, `later ${number}`)).toBe("paused");
        relay.wake();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await vi.waitFor(() => expect(arrivals.length).toBeGreaterThanOrEqual(6), { timeout: 20_000, interval: 5 });
      down = false;
      // Every attempt while down came a retry's wait after the one before (timers fire late, never early).
      const gaps = arrivals.slice(1).map((at, i) => at - arrivals[i]!);
      expect(Math.min(...gaps), gaps.map((gap) => gap.toFixed(0)).join(", ")).toBeGreaterThanOrEqual(140);
      expect(receiver.maxInFlight).toBe(1);
      await vi.waitFor(async () => expect((await db.query("SELECT 1 FROM event_outbox")).length).toBe(0), { timeout: 20_000, interval: 20 });
      expect(reasonsTo(receiver, "1001").at(-1)).toBe("first");
      for (const number of ["1002", "1003", "1004", "1005"]) expect(reasonsTo(receiver, number).at(-1)).toBe(`later ${number}`);
    }), 60_000);

  // Found by review of the hold above: the event that found the receiver down was the next
  // round's one probe, so one event a receiver always fails on (a 500 on its text) held back
  // every agent's events for good.
  // And by a second review: with two such events, each round's probe was the other one.
  it.each([[["1001"]], [["1001", "1002"]]])("events a receiver always fails on with a 5xx (of %j) hold back their agents' events only", (failing) =>
    withRelay({ retryMinMs: 100, retryMaxMs: 400 }, async ({ db, store, receiver, relay }) => {
      await store.upsert([loggedIn(3), loggedIn(4), loggedIn(5)]);
      receiver.answer = (_, body) => (failing.includes(agentNumberOf(body)) ? 500 : 204);
      for (const number of failing) expect(await store.pause(number, "poison")).toBe("paused");
      await relay.start(true);
      await vi.waitFor(() => expect(receiver.received.length).toBeGreaterThan(0), { timeout: 10_000, interval: 5 });
      const later = ["a", "b", "c"];
      const others = ["1003", "1004", "1005"];
      for (const number of others) {
        for (const reason of later) expect(await store.pause(number, reason)).toBe("paused");
        relay.wake();
      }
      await vi.waitFor(
        () => {
          for (const number of others) expect(reasonsTo(receiver, number)).toEqual(later);
        },
        { timeout: 20_000, interval: 20 },
      );
      for (const number of failing) expect(new Set(reasonsTo(receiver, number))).toEqual(new Set(["poison"]));
      // A row is deleted just after the receiver has it: its deletion is awaited, not assumed.
      await vi.waitFor(
        async () => expect((await db.query<{ agent_id: number }>("SELECT agent_id FROM event_outbox ORDER BY agent_id")).map((row) => `100${row.agent_id}`)).toEqual(failing),
        { timeout: 10_000, interval: 20 },
      );
    }), 60_000);

  it("after a failed DELETE, sends nothing out of order: no delivery starts, and what was delivered is deleted once the database answers", async () => {
    let failDelete = true;
    // What happened, in order: the failed DELETE, each answered delivery, each release of undelivered rows.
    const happened: string[] = [];
    const failingOnce = (db: Sql): Sql => ({
      ...db,
      query: (...args: Parameters<Sql["query"]>) => {
        if (failDelete && args[0].startsWith("DELETE FROM event_outbox")) {
          failDelete = false;
          happened.push("delete failed");
          return Promise.reject(new DatabaseUnavailableError("connection reset"));
        }
        if (args[0].startsWith("UPDATE event_outbox SET not_before")) happened.push("release");
        return db.query(...args);
      },
    });
    await withRelay({ sql: failingOnce, retryMinMs: 50, retryMaxMs: 200 }, async ({ db, store, receiver, relay }) => {
      receiver.delayMs = 30;
      receiver.answer = () => {
        happened.push("delivered");
        return 204;
      };
      const reasons = ["r0", "r1", "r2", "r3", "r4"];
      for (const reason of reasons) expect(await store.pause("1001", reason)).toBe("paused");
      await relay.start(true);
      await vi.waitFor(async () => expect((await db.query("SELECT 1 FROM event_outbox")).length).toBe(0), { timeout: 15_000, interval: 20 });
      expect(failDelete, "the DELETE that failed").toBe(false);
      expect(reasonsTo(receiver, "1001")).toEqual(reasons);
      // Between the failure and the round's hand-back, only the delivery already under way ends: none starts.
      const failed = happened.indexOf("delete failed");
      const handedBack = happened.indexOf("release", failed);
      expect(handedBack, happened.join(", ")).toBeGreaterThan(failed);
      expect(happened.slice(failed, handedBack).filter((entry) => entry === "delivered").length, happened.join(", ")).toBeLessThanOrEqual(1);
    });
  }, 40_000);

  // Found by an operator's walk: after a short PostgreSQL outage, the rows a round had
  // delivered or claimed stayed claimed for the whole lease, holding back every later
  // event of their agents, and the delivered ones were then sent again.
  it("a round cut off by an outage writes back what it could not once the database answers: delivered rows deleted, the rest handed back, not left to their lease", async () => {
    let down = false;
    let downStatements = 0;
    const outage = (db: Sql): Sql => ({
      ...db,
      query: (...args: Parameters<Sql["query"]>) => {
        if (!down) return db.query(...args);
        downStatements++;
        return Promise.reject(new DatabaseUnavailableError("connect ECONNREFUSED"));
      },
    });
    // Leased, as on PostgreSQL; a lease far longer than the test may wait.
    await withRelay({ sql: outage, retryMinMs: 50, retryMaxMs: 200, leaseMs: 600_000 }, async ({ db, store, receiver, relay }) => {
      receiver.delayMs = 20;
      // The database goes away once the third event has reached the receiver, with the round under way.
      receiver.answer = () => {
        if (receiver.received.length === 3) down = true;
        return 204;
      };
      const reasons = ["r0", "r1", "r2", "r3", "r4", "r5"];
      for (const reason of reasons) expect(await store.pause("1001", reason)).toBe("paused");
      await relay.start(false);
      // The round failed to write back, and a later one too, while the database was away.
      await vi.waitFor(() => expect(downStatements).toBeGreaterThanOrEqual(3), { timeout: 15_000, interval: 10 });
      down = false;
      await vi.waitFor(async () => expect((await db.query("SELECT 1 FROM event_outbox")).length).toBe(0), { timeout: 15_000, interval: 20 });
      // Each once, in order: the delivered rows were deleted, not sent again.
      expect(reasonsTo(receiver, "1001")).toEqual(reasons);
    });
  }, 40_000);

  // Found by the review of that change: a failed RETRY ended its worker, and the agents no
  // worker had reached yet (one worker after a sink looked down) stayed claimed for the lease.
  it("a failed retry's UPDATE leaves no other agent's rows to their lease", async () => {
    let failRetry = true;
    const retryFailsOnce = (db: Sql): Sql => ({
      ...db,
      query: (...args: Parameters<Sql["query"]>) => {
        if (failRetry && args[0].startsWith("UPDATE event_outbox SET attempts")) {
          failRetry = false;
          return Promise.reject(new DatabaseUnavailableError("connection reset"));
        }
        return db.query(...args);
      },
    });
    await withRelay({ sql: retryFailsOnce, concurrency: 1, retryMinMs: 60_000, retryMaxMs: 60_000, leaseMs: 600_000 }, async ({ store, receiver, relay }) => {
      receiver.answer = (_, body) => (agentNumberOf(body) === "1001" ? 422 : 204);
      expect(await store.pause("1001", "refused")).toBe("paused");
      expect(await store.pause("1002", "behind")).toBe("paused");
      await relay.start(false);
      await vi.waitFor(() => expect(reasonsTo(receiver, "1002")).toEqual(["behind"]), { timeout: 15_000, interval: 20 });
      expect(failRetry, "the RETRY that failed").toBe(false);
    });
  }, 40_000);

  it("delivers to one receiver while another has not answered yet: each sink has its own loop", async () => {
    const database = await freshPglite();
    const db = await database.openMigrated();
    const slow = await startWebhookReceiver();
    const fast = await startWebhookReceiver();
    // It answers only once the test is over: until then, its first delivery is in flight.
    slow.delayMs = 120_000;
    const slowSink = new WebhookSink({ url: slow.url, secret: SECRET, timeoutMs: 60_000 });
    const fastSink = new WebhookSink({ url: fast.url, secret: SECRET, timeoutMs: 5_000 });
    const relay = new Relay({ sql: db, sinks: [slowSink, fastSink], logger: pino({ level: "silent" }), retryMinMs: 50, retryMaxMs: 200, pollMs: 20, leaseMs: 130_000 });
    try {
      const store = new SqlAgentStore(db, ORIGIN, { sinks: [slowSink.name, fastSink.name] });
      await store.upsert([loggedIn(1)]);
      expect(await store.pause("1001", "first")).toBe("paused");
      await relay.start(true);
      await vi.waitFor(() => expect(fast.received).toHaveLength(1), { timeout: 10_000, interval: 20 });
      // Recorded after the first round began: the fast sink's next round takes it, whatever the slow one does.
      expect(await store.pause("1001", "second")).toBe("paused");
      relay.wake();
      await vi.waitFor(() => expect(fast.received).toHaveLength(2), { timeout: 10_000, interval: 20 });
      expect(slow.received).toHaveLength(0);
    } finally {
      await slow.close();
      await relay.stop();
      await fast.close();
      await db.close();
      await database.cleanup();
    }
  }, 40_000);

  it("deletes each event once delivered, and on stop starts no new delivery: nothing delivered is sent again", () =>
    withRelay({ retryMinMs: 50, retryMaxMs: 200 }, async ({ db, store, receiver, relay }) => {
      receiver.delayMs = 200;
      const outbox = async () => (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM event_outbox"))[0]!.n;
      // One agent's events go one after the other: one batch, 20 deliveries long.
      for (let i = 0; i < 20; i++) expect(await store.pause("1001", `reason ${i}`)).toBe("paused");
      await relay.start(true);
      await vi.waitFor(() => expect(receiver.received.length).toBeGreaterThanOrEqual(3), { timeout: 10_000, interval: 10 });
      // Deleted as delivered, not at the end of the batch: while the batch is still being delivered.
      await vi.waitFor(
        async () => {
          const left = await outbox();
          expect(receiver.received.length).toBeLessThan(20);
          expect(left).toBeLessThanOrEqual(20 - 3);
        },
        { timeout: 10_000, interval: 10 },
      );
      await relay.stop();
      const received = receiver.received.length;
      expect(received).toBeLessThan(20);
      // Exactly the undelivered events are left, for the next start.
      expect(await outbox()).toBe(20 - received);
      const restarted = webhookRelay(db, receiver, { pollMs: 20, leaseMs: 60_000 });
      await restarted.start(true);
      try {
        await vi.waitFor(async () => expect(await outbox()).toBe(0), { timeout: 20_000, interval: 20 });
      } finally {
        await restarted.stop();
      }
      const ids = receiver.received.map((r) => r.headers["webhook-id"]);
      expect(ids).toHaveLength(20);
      expect(new Set(ids).size).toBe(20);
    }), 60_000);
});

describe("the claim by agent (migration 11)", () => {
  // The embedded database analyses the outbox only at start and now and then: a plan kept from the
  // empty outbox of a start would read the whole table for each agent once a backlog has built up.
  it("reads the outbox by its indexes once a backlog has built up, after many claims on the empty outbox of a start", async () => {
    const database = await freshPglite();
    const db = await database.openMigrated();
    try {
      const claim = async (): Promise<unknown[]> => {
        const agents = (await db.query<{ agent_id: number }>("SELECT agent_id FROM event_outbox_agents('bus', 0, 200)")).map((row) => row.agent_id);
        return db.query("SELECT * FROM event_outbox_peek_of('bus', $1::integer[], 100, 10)", [agents]);
      };
      /** Sequential scans of the outbox so far (the statistics flushed first). */
      const seqScans = async (): Promise<number> => {
        await db.query("SELECT pg_stat_force_next_flush()");
        await db.query("SELECT 1");
        await db.query("SELECT pg_stat_clear_snapshot()");
        const [row] = await db.query<{ seq_scan: string }>("SELECT seq_scan FROM pg_stat_user_tables WHERE relname = 'event_outbox'");
        return Number(row!.seq_scan);
      };
      // As the relay's start does on the embedded database; then the claims of a quiet start.
      await db.query("VACUUM (ANALYZE) event_outbox");
      for (let i = 0; i < 10; i++) expect(await claim()).toEqual([]);
      // 500 agents with 40 events each; the first 150 held back by their oldest event.
      await db.query(
        "INSERT INTO event_outbox (event_id, sink, agent_id, name, payload) SELECT gen_random_uuid(), 'bus', 1 + g % 500, 'agent_paused', '{}' FROM generate_series(0, 19999) AS g",
      );
      await db.query("UPDATE event_outbox SET not_before = now() + interval '1 hour' WHERE seq IN (SELECT min(seq) FROM event_outbox WHERE agent_id <= 150 GROUP BY agent_id)");
      // The count moves: a question no index answers reads the table.
      const control = await seqScans();
      await db.query("SELECT count(*) FROM event_outbox WHERE payload <> ''");
      const before = await seqScans();
      expect(before).toBeGreaterThan(control);
      // A tenth of the batch from each of the first ten agents not held back.
      const rows = (await claim()) as { agent_id: number }[];
      expect(rows.length).toBe(100);
      expect(new Set(rows.map((row) => row.agent_id))).toEqual(new Set(Array.from({ length: 10 }, (_, i) => 151 + i)));
      expect(await seqScans()).toBe(before);
    } finally {
      await db.close();
      await database.cleanup();
    }
  });
});

describe("the webhook sink", () => {
  it("signs with each of several secrets (one replacing another): a receiver holding either accepts the delivery", async () => {
    const receiver = await startWebhookReceiver();
    const next = `whsec_${randomBytes(32).toString("base64")}`;
    const sink = new WebhookSink({ url: receiver.url, secret: `${next} ${SECRET}`, timeoutMs: 5000 });
    const event = { seq: "1", eventId: "msg_rotation", agentId: 1, name: "agent_paused" as const, payload: '{"name":"agent_paused"}', createdAt: new Date() };
    try {
      await sink.deliver(event);
      const { body, headers } = receiver.received[0]!;
      expect(String(headers["webhook-signature"]).split(" ")).toHaveLength(2);
      for (const secret of [SECRET, next]) expect(new Webhook(secret).verify(body, headers as Record<string, string>)).toEqual({ name: "agent_paused" });
      expect(() => new Webhook(`whsec_${randomBytes(32).toString("base64")}`).verify(body, headers as Record<string, string>)).toThrow(/signature/i);
    } finally {
      await sink.close();
      await receiver.close();
    }
  });

  it("fails a delivery the receiver does not answer within the time-out, and delivers once it answers", async () => {
    const receiver = await startWebhookReceiver();
    const sink = new WebhookSink({ url: receiver.url, secret: SECRET, timeoutMs: 1000 });
    const event = { seq: "1", eventId: "msg_timeout", agentId: 1, name: "agent_paused" as const, payload: '{"name":"agent_paused"}', createdAt: new Date() };
    try {
      // Longer than the test's own time-out: only the sink's time-out can end the delivery in time.
      receiver.delayMs = 120_000;
      await expect(sink.deliver(event)).rejects.toThrow(/did not answer within 1000 ms \(AGENTD_WEBHOOK_TIMEOUT\)/);
      receiver.delayMs = 0;
      await sink.deliver(event);
      expect(receiver.received.at(-1)?.headers["webhook-id"]).toBe("msg_timeout");
      // A refusal whose answer does not end in time is a receiver too slow, not a refused event; its status is said.
      receiver.answer = () => 422;
      receiver.answerBody = "half of it, then nothing for longer than the time-out";
      receiver.answerGapMs = 120_000;
      const slow = sink.deliver(event);
      await expect(slow).rejects.toThrow(/^webhook answered 422, and its answer did not end, within 1000 ms \(AGENTD_WEBHOOK_TIMEOUT\)$/);
      await expect(slow).rejects.not.toBeInstanceOf(DeliveryRefused);
    } finally {
      await sink.close();
      await receiver.close();
    }
  }, 20_000);
});

describe("two relays sharing the outbox through leases, as instances on one PostgreSQL do", () => {
  it("a slow receiver never makes an event go out twice or out of order: past half its lease, a relay hands the rest back", async () => {
    const database = await freshPglite();
    const db = await database.openMigrated();
    const receiver = await startWebhookReceiver();
    receiver.delayMs = 200;
    // Twelve deliveries of 200 ms take 2.4 s: past this lease, in one claim.
    // The lease is ten deliveries long, so a delivery that starts just
    // before half of it may stall for most of a second and still end within
    // it, as on a loaded CI machine; a shorter one let a stall outlast it.
    // The hand-backs the relays write: at once (no wait), not left to the lease.
    const handBacks: unknown[] = [];
    const recorded: Sql = {
      ...db,
      query: (...args: Parameters<Sql["query"]>) => {
        if (args[0].startsWith("UPDATE event_outbox SET not_before") && args[1]?.[1] === 0) handBacks.push(args[1][0]);
        return db.query(...args);
      },
    };
    const relays = ["a", "b"].map(() => webhookRelay(recorded, receiver, { pollMs: 20, leaseMs: 2_000 }));
    try {
      const store = new SqlAgentStore(db, ORIGIN, { sinks: [webhookSinkName(receiver.url)] });
      await store.upsert([loggedIn(1)]);
      const reasons = Array.from({ length: 12 }, (_, i) => `r${i}`);
      for (const reason of reasons) expect(await store.pause("1001", reason)).toBe("paused");

      // Not embedded: the relays claim with leases, as on PostgreSQL.
      await Promise.all(relays.map((relay) => relay.start(false)));
      await expect.poll(async () => (await db.query("SELECT 1 FROM event_outbox")).length, { message: "events left in the outbox", timeout: 30_000, interval: 25 }).toBe(0);
      const sent = receiver.received.map((r) => (JSON.parse(r.body) as { data: { paused_reason: string } }).data.paused_reason);
      expect(sent).toEqual(reasons);
      expect(new Set(receiver.received.map((r) => r.headers["webhook-id"])).size).toBe(reasons.length);
      expect(receiver.maxInFlightPerAgent).toBe(1);
      // Found by rereading b5ae0ff: its half-lease rule for a round's leftovers after an outage
      // also skipped this hand-back, leaving the rest of the claim to its lease.
      expect(handBacks.length).toBeGreaterThan(0);
    } finally {
      await Promise.all(relays.map((relay) => relay.stop()));
      await receiver.close();
      await db.close();
      await database.cleanup();
    }
  }, 60_000);
});

/** Whether `exchange` exists on the machine's RabbitMQ (a passive declare, which creates nothing). */
async function exchangeExists(exchange: string): Promise<boolean> {
  const connection = await amqp.connect(RABBIT_URL);
  try {
    const channel = await connection.createChannel();
    channel.on("error", () => undefined);
    return await channel.checkExchange(exchange).then(
      () => true,
      () => false,
    );
  } finally {
    await connection.close().catch(() => undefined);
  }
}

describe("the bus at start", () => {
  it("a server declares its exchange as it starts, so a consumer can bind its queue before the first event, and shows its counters at 0", async () => {
    const exchange = freshExchange();
    expect(await exchangeExists(exchange)).toBe(false);
    const server = await startTestServer({ AGENTD_BUS_URL: RABBIT_URL, AGENTD_BUS_EXCHANGE: exchange }, AGENTS);
    try {
      await vi.waitFor(async () => expect(await exchangeExists(exchange)).toBe(true), { timeout: 15_000, interval: 50 });
      // The configured sink's counters are there from the start, at 0, for alerts to have a series; no other sink's.
      const metrics = await (await fetch(`${server.running.opsUrl}/metrics`)).text();
      expect(metrics).toMatch(/^agentd_events_delivered_total\{sink="bus"\} 0$/m);
      expect(metrics).toMatch(/^agentd_event_delivery_failures_total\{sink="bus"\} 0$/m);
      expect(metrics).not.toContain('sink="webhook"');
    } finally {
      await server.close();
    }
  }, 60_000);

  it("logs at start whether the bus answered: connected, or not reachable with why", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const exchange = freshExchange();
    const good = new BusSink({ url: RABBIT_URL, exchange, timeoutMs: 10_000, logger });
    const wrongPassword = new BusSink({ url: RABBIT_URL.replace(/:[^:@/]*@/, ":not-the-password@"), exchange, timeoutMs: 10_000, logger });
    try {
      good.prepare();
      wrongPassword.prepare();
      await vi.waitFor(() => expect(lines.map((l) => l.msg).sort()).toEqual(["bus connected, exchange declared", "bus not reachable at start: events wait in the outbox until it is"]), {
        timeout: 15_000,
        interval: 20,
      });
      expect(lines.find((l) => l.level === 40)?.err).toMatch(/ACCESS_REFUSED|403/);
      expect(await exchangeExists(exchange)).toBe(true);
    } finally {
      await good.close();
      await wrongPassword.close();
    }
  }, 30_000);
});

describe("delivery by a server", () => {
  let consumer: BusConsumer;
  let receiver: WebhookReceiver;
  let server: TestServer;
  const exchange = freshExchange();

  beforeAll(async () => {
    consumer = await consume(exchange, "status.agent.#");
    receiver = await startWebhookReceiver();
    server = await startTestServer(
      { AGENTD_BUS_URL: RABBIT_URL, AGENTD_BUS_EXCHANGE: exchange, AGENTD_WEBHOOK_URLS: receiver.url, AGENTD_WEBHOOK_SECRET: SECRET, AGENTD_EVENT_POLL_INTERVAL: "50ms" },
      AGENTS,
    );
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
    await consumer?.close();
  });

  it("publishes upstream's message on the bus and signs the same body to the webhook", async () => {
    expect((await pause(server, "1001", "lunch break")).status).toBe(204);
    expect((await pause(server, "1001", "lunch break")).status).toBe(204); // no change: no event
    expect((await pause(server, "1001")).status).toBe(204);
    await vi.waitFor(() => expect({ bus: consumer.messages.length >= 2, webhooks: receiver.received.length >= 2 }, "two events on each sink").toEqual({ bus: true, webhooks: true }), { timeout: 30_000, interval: 25 });

    const origin = (await server.call("GET", "/agents/by-number/1001")).json as { origin_uuid: string };
    const expected = (reason: string) => ({
      name: "agent_paused",
      origin_uuid: origin.origin_uuid,
      data: { agent_id: 1, agent_number: "1001", queue: null, paused: true, paused_reason: reason },
      required_acl: "events.statuses.agents",
    });
    expect(consumer.messages.map((m) => m.body)).toEqual([expected("lunch break"), expected("")]);
    for (const message of consumer.messages) {
      expect(message.routingKey).toBe("status.agent.pause");
      expect(message.properties).toMatchObject({ contentType: "application/json", deliveryMode: 2 });
      expect(message.properties.messageId).toMatch(/^[0-9a-f-]{36}$/);
      expect(Math.abs(message.properties.timestamp! - Date.now() / 1000)).toBeLessThan(3600); // seconds, not milliseconds
      expectValid(pausedSchema, message.body);
    }

    expect(receiver.received.map((r) => JSON.parse(r.body) as unknown)).toEqual([expected("lunch break"), expected("")]);
    const verifier = new Webhook(SECRET);
    const impostor = new Webhook(`whsec_${randomBytes(32).toString("base64")}`);
    receiver.received.forEach((hook, index) => {
      const headers = hook.headers as Record<string, string>;
      expect(headers["webhook-id"]).toBe(consumer.messages[index]!.properties.messageId);
      expect(verifier.verify(hook.body, headers)).toEqual(JSON.parse(hook.body));
      expect(() => impostor.verify(hook.body, headers)).toThrow(/signature/i);
    });
    // Delivered rows do not pile up.
    await vi.waitFor(async () => expect(await (await fetch(`${server.running.opsUrl}/metrics`)).text()).toMatch(/agentd_events_pending 0\b/), { timeout: 30_000, interval: 25 });
    const metrics = await (await fetch(`${server.running.opsUrl}/metrics`)).text();
    expect(metrics).toMatch(/agentd_events_delivered_total\{sink="bus"\} 2\b/);
    expect(metrics).toMatch(/agentd_events_delivered_total\{sink="webhook"\} 2\b/);
    expect(metrics).toMatch(/agentd_event_oldest_pending_seconds 0\b/);
  });

  it("unpause through the API publishes agent_unpaused with its own routing key, once per change", async () => {
    const before = { bus: consumer.messages.length, hooks: receiver.received.length };
    expect((await pause(server, "1001", "training")).status).toBe(204);
    expect((await server.call("POST", "/agents/by-number/1001/unpause")).status).toBe(204);
    expect((await server.call("POST", "/agents/by-number/1001/unpause")).status).toBe(204); // not paused: no event
    await vi.waitFor(
      () =>
        expect({ bus: consumer.messages.length >= before.bus + 2, webhooks: receiver.received.length >= before.hooks + 2 }, "a pause and an unpause on each sink").toEqual({
          bus: true,
          webhooks: true,
        }),
      { timeout: 30_000, interval: 25 },
    );
    await new Promise((resolve) => setTimeout(resolve, 500)); // a third event, if one were wrongly sent, would be here by now
    const bus = consumer.messages.slice(before.bus);
    expect(bus.map((m) => [m.routingKey, (m.body as { name: string }).name])).toEqual([
      ["status.agent.pause", "agent_paused"],
      ["status.agent.unpause", "agent_unpaused"],
    ]);
    const unpaused = bus[1]!.body;
    expect(unpaused).toMatchObject({ data: { agent_id: 1, agent_number: "1001", queue: null, paused: false, paused_reason: "" } });
    expectValid(unpausedSchema, unpaused);
    expect(receiver.received.slice(before.hooks).map((r) => (JSON.parse(r.body) as { name: string }).name)).toEqual(["agent_paused", "agent_unpaused"]);
  });
});

describe("sinks down", () => {
  // A server's stop closes its sinks; amqplib's close waits for the
  // broker's Close-Ok, which a broker gone silent never sends.
  it("closes the bus within its time-out when the broker has gone silent: a stop is never held by it", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const proxy = await startTcpProxy({ port: 5672 });
    const sink = new BusSink({ url: `amqp://guest:guest@127.0.0.1:${proxy.port}`, exchange: freshExchange(), timeoutMs: 500, logger });
    try {
      sink.prepare();
      await vi.waitFor(() => expect(lines.map((l) => l.msg)).toContain("bus connected, exchange declared"), { timeout: 15_000, interval: 20 });
      await proxy.cut("stall");
      // Without the bound this waits for the connection's heartbeat to give up, a minute or more: the test's time-out fails it.
      await sink.close();
    } finally {
      await proxy.close();
    }
  }, 20_000);

  // Found by an operator's walk: a bus that was down at start, or that came back
  // after an outage, was never logged as connected, though consumers wait for the line.
  it("logs the bus as connected again each time it is back: after a start without it, and after it was lost", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const connected = () => lines.filter((l) => l.msg === "bus connected, exchange declared").length;
    const proxy = await startTcpProxy({ port: 5672 });
    const sink = new BusSink({ url: `amqp://guest:guest@127.0.0.1:${proxy.port}`, exchange: freshExchange(), timeoutMs: 2_000, logger });
    const event = (n: number) => ({ seq: String(n), eventId: `msg_back_${n}`, agentId: 1, name: "agent_paused" as const, payload: JSON.stringify({ n }), createdAt: new Date() });
    try {
      await proxy.cut("refuse");
      sink.prepare();
      await vi.waitFor(() => expect(lines.map((l) => l.msg)).toContain("bus not reachable at start: events wait in the outbox until it is"), { timeout: 15_000, interval: 20 });
      await proxy.restore();
      await sink.deliver(event(1));
      expect(connected()).toBe(1);
      await proxy.cut("refuse");
      await expect(sink.deliver(event(2))).rejects.toThrow();
      await proxy.restore();
      await sink.deliver(event(2));
      expect(connected()).toBe(2);
      // One line per connection made, not per delivery.
      await sink.deliver(event(3));
      expect(connected()).toBe(2);
    } finally {
      await sink.close();
      await proxy.close();
    }
  }, 30_000);

  // A dropped connection's close can come after a newer connection replaced
  // it (bus-sink.ts, open()): it must forget only itself, or every late
  // close would cost the next event a new connection.
  it("keeps its newer connection when a dropped one closes late: the next event goes out on it, with no new connection", async () => {
    const exchange = freshExchange();
    const consumer = await consume(exchange, "status.agent.#");
    const proxy = await startTcpProxy({ port: 5672 });
    const connect = amqp.connect.bind(amqp);
    const models: amqp.ChannelModel[] = [];
    const spy = vi.spyOn(amqp, "connect").mockImplementation(async (...args: Parameters<typeof amqp.connect>) => {
      const model = await connect(...args);
      models.push(model);
      return model;
    });
    const sink = new BusSink({ url: `amqp://guest:guest@127.0.0.1:${proxy.port}`, exchange, timeoutMs: 500, logger: pino({ level: "silent" }) });
    const event = (n: number) => ({ seq: String(n), eventId: `msg_late_close_${n}`, agentId: 1, name: "agent_paused" as const, payload: JSON.stringify({ n }), createdAt: new Date() });
    try {
      await sink.deliver(event(1));
      proxy.stallOpen();
      // The first connection hangs: the publish times out, and the sink drops it; its close waits for the broker.
      await expect(sink.deliver(event(2))).rejects.toThrow(/timed out waiting for the bus to confirm/);
      await sink.deliver(event(2));
      expect(models).toHaveLength(2);
      const firstClosed = new Promise((resolve) => models[0]!.once("close", resolve));
      // Destroys the hung connection: its close comes now, after the second replaced it.
      await proxy.restore();
      await firstClosed;
      await sink.deliver(event(3));
      expect(models, "connections opened").toHaveLength(2);
      expect(proxy.accepted).toBe(2);
      await vi.waitFor(() => expect(consumer.messages.map((m) => m.body)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]), { timeout: 15_000, interval: 25 });
    } finally {
      spy.mockRestore();
      await sink.close();
      await proxy.close();
      await consumer.close();
    }
  }, 60_000);

  it("answers 204 while the broker is cut, and publishes once it is back", async () => {
    const exchange = freshExchange();
    const consumer = await consume(exchange, "status.agent.#");
    const proxy = await startTcpProxy({ port: 5672 });
    const server = await startTestServer(
      { AGENTD_BUS_URL: `amqp://guest:guest@127.0.0.1:${proxy.port}`, AGENTD_BUS_EXCHANGE: exchange, AGENTD_EVENT_POLL_INTERVAL: "50ms", AGENTD_EVENT_RETRY_MIN: "50ms", AGENTD_EVENT_RETRY_MAX: "200ms" },
      AGENTS,
    );
    try {
      await proxy.cut("refuse");
      for (const reason of ["a", "b", "c"]) expect((await pause(server, "1002", reason)).status).toBe(204);
      await vi.waitFor(async () => expect(await (await fetch(`${server.running.opsUrl}/metrics`)).text()).toMatch(/agentd_event_delivery_failures_total\{sink="bus"\} [1-9]/), { timeout: 30_000, interval: 25 });
      expect(consumer.messages).toEqual([]);
      await proxy.restore();
      await vi.waitFor(() => expect(consumer.messages.length, "events after the broker is back").toBeGreaterThanOrEqual(3), { timeout: 30_000, interval: 25 });
      expect(consumer.messages.map((m) => (m.body as { data: { paused_reason: string } }).data.paused_reason)).toEqual(["a", "b", "c"]);
    } finally {
      await server.close();
      await proxy.close();
      await consumer.close();
    }
  }, 60_000);

  it("retries a webhook answered 500, keeping each agent's order", async () => {
    const receiver = await startWebhookReceiver();
    receiver.answer = (index) => (index < 2 ? 500 : 200);
    const server = await startTestServer(
      { AGENTD_WEBHOOK_URLS: receiver.url, AGENTD_WEBHOOK_SECRET: SECRET, AGENTD_EVENT_POLL_INTERVAL: "50ms", AGENTD_EVENT_RETRY_MIN: "50ms", AGENTD_EVENT_RETRY_MAX: "200ms" },
      AGENTS,
    );
    try {
      for (const reason of ["a", "b", "c"]) {
        expect((await pause(server, "1001", reason)).status).toBe(204);
        expect((await pause(server, "1002", reason)).status).toBe(204);
      }
      await vi.waitFor(() => expect(receiver.received.filter((r) => r.status === 200).length, "deliveries").toBeGreaterThanOrEqual(6), { timeout: 30_000, interval: 25 });
      const delivered = receiver.received.filter((r) => r.status === 200).map((r) => JSON.parse(r.body) as { data: { agent_number: string; paused_reason: string } });
      for (const number of ["1001", "1002"]) {
        expect(delivered.filter((e) => e.data.agent_number === number).map((e) => e.data.paused_reason)).toEqual(["a", "b", "c"]);
      }
      expect(receiver.received.filter((r) => r.status === 500).length).toBe(2);
      // The failed attempts were the same events, sent again under the same id.
      const ids = new Set(receiver.received.filter((r) => r.status === 200).map((r) => r.headers["webhook-id"]));
      for (const failed of receiver.received.filter((r) => r.status === 500)) expect(ids.has(failed.headers["webhook-id"])).toBe(true);
    } finally {
      await server.close();
      await receiver.close();
    }
  }, 60_000);
});

