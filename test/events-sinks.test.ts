// Events survive configuration changes: a sink is its URL as the URL
// standard writes it, and the events of a sink that is no longer configured
// are kept, counted and logged until it comes back or an operator drops them
// with `agentd events drop`. Real servers, real webhook receivers, the real
// CLI, on the embedded database and on PostgreSQL.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { freePort } from "../devkit/ports.js";
import { openPglite } from "../server/db/pglite.js";
import type { Sql } from "../server/db/sql.js";
import { readOriginUuid } from "../server/store/deployment.js";
import { SqlAgentStore } from "../server/store/sql-agent-store.js";
import { loggedIn } from "./helpers/agents.js";
import { ownDataDir } from "./helpers/data-dir.js";
import { freshPostgres, postgresTestUrl } from "./helpers/databases.js";
import { runAgentd, spawnAgentd } from "./helpers/process.js";
import { startTestServer, type TestServer } from "./helpers/server.js";
import { startWebhookReceiver } from "./helpers/webhook-receiver.js";

const SECRET = `whsec_${randomBytes(32).toString("base64")}`;
const AGENTS = [loggedIn(1), loggedIn(2)];
const FAST = { AGENTD_WEBHOOK_SECRET: SECRET, AGENTD_EVENT_POLL_INTERVAL: "50ms", AGENTD_EVENT_RETRY_MIN: "50ms", AGENTD_EVENT_RETRY_MAX: "200ms" };
const WAIT = { timeout: 30_000, interval: 25 };

/** One gauge or counter without labels, as the operator listener serves it now. */
async function metric(opsUrl: string | null, name: string): Promise<number> {
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  const value = new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1];
  if (value === undefined) throw new Error(`${name} is not in the metrics`);
  return Number(value);
}

/** A server on `dataDir` delivering to `urls` (written as given). */
const serverOn = (dataDir: string, urls: string): Promise<TestServer> => startTestServer({ AGENTD_DATA_DIR: dataDir, AGENTD_WEBHOOK_URLS: urls, ...FAST });

/** Records a pause of agent 1001 for `sinks` with the statement of agentd before sink names were normalised (migration 4's): the sink names go in as given. */
async function pauseAsAnOlderVersion(db: Sql, reason: string, sinks: string[]): Promise<void> {
  const older = "SELECT agent_change_with_event($1::text, $2::boolean, $3::text, 'agent_paused', $4::text, $5::text[]) AS id";
  expect(await db.query(older, ["1001", true, reason, await readOriginUuid(db, null), sinks])).toEqual([{ id: 1 }]);
}

describe("events survive configuration changes (embedded database)", () => {
  it("an event pending for a URL is kept and counted under another URL, and delivered when the first comes back written another way", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "agentd-sinks-"));
    await ownDataDir(dataDir, AGENTS);
    const portA = await freePort();
    const other = await startWebhookReceiver();
    let receiver: Awaited<ReturnType<typeof startWebhookReceiver>> | null = null;
    let server: TestServer | null = null;
    try {
      // Nothing listens on port A yet: the event waits in the outbox.
      server = await serverOn(dataDir, `http://127.0.0.1:${portA}/hooks`);
      expect((await server.call("POST", "/agents/by-number/1001/pause", { body: { reason: "kept" } })).status).toBe(204);
      await server.close();
      server = null;

      // Another URL: the event is kept for A, counted apart from the backlog, and listed.
      server = await serverOn(dataDir, other.url);
      expect(await metric(server.running.opsUrl, "agentd_events_orphaned")).toBe(1);
      expect(await metric(server.running.opsUrl, "agentd_events_pending")).toBe(0);
      expect(await metric(server.running.opsUrl, "agentd_event_oldest_pending_seconds")).toBe(0);
      const list = await runAgentd(["events", "list"], { AGENTD_DATA_DIR: dataDir }, { cwd: dataDir });
      expect(list.code, list.stderr).toBe(0);
      expect(list.stdout).toMatch(new RegExp(`^PENDING +OLDEST +SINK STATE +SINK\\n1 +\\d{4}-\\d\\d-\\d\\dT\\S+Z +not configured +http://127\\.0\\.0\\.1:${portA}/hooks\\n$`));
      const listed = await runAgentd(["events", "list", "--json"], { AGENTD_DATA_DIR: dataDir }, { cwd: dataDir });
      expect(listed.code, listed.stderr).toBe(0);
      expect(JSON.parse(listed.stdout)).toEqual([{ sink: `http://127.0.0.1:${portA}/hooks`, pending: 1, oldest: expect.stringMatching(/Z$/), configured: false }]);
      // The running server's configured sink, in any spelling, is not dropped without --force.
      const refused = await runAgentd(["events", "drop", "--sink", other.url.replace("http://", "HTTP://")], { AGENTD_DATA_DIR: dataDir }, { cwd: dataDir });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`${other.url} is a configured sink`);
      await server.close();
      server = null;

      // A again, written another way (scheme case, a dot segment): the same sink, and its event goes out.
      receiver = await startWebhookReceiver(portA);
      server = await serverOn(dataDir, `HTTP://127.0.0.1:${portA}/x/../hooks`);
      await vi.waitFor(() => expect(receiver!.received.length, "the kept event").toBeGreaterThanOrEqual(1), WAIT);
      expect(receiver.received.map((r) => JSON.parse(r.body) as unknown)).toEqual([expect.objectContaining({ name: "agent_paused", data: expect.objectContaining({ agent_number: "1001", paused_reason: "kept" }) })]);
      await vi.waitFor(async () => expect(await metric(server!.running.opsUrl, "agentd_events_pending")).toBe(0), WAIT);
      expect(await metric(server.running.opsUrl, "agentd_events_orphaned")).toBe(0);
      expect(other.received).toEqual([]);
    } finally {
      await server?.close();
      await receiver?.close();
      await other.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  it("agentd events drop deletes a sink's kept events, whatever spelling they were stored under, and says how many: through the running server and without one", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "agentd-sinks-"));
    await ownDataDir(dataDir, AGENTS);
    const [portA, portC] = [await freePort(), await freePort()];
    const receiver = await startWebhookReceiver();
    let server: TestServer | null = null;
    try {
      // Kept for A: two events under two spellings of it (as older versions stored them), one for C.
      const db = await openPglite(dataDir);
      try {
        await pauseAsAnOlderVersion(db, "a1", [`webhook http://127.0.0.1:${portA}/hooks`]);
        await pauseAsAnOlderVersion(db, "a2", [`webhook http://127.0.0.1:${portA}/./hooks`, `webhook http://127.0.0.1:${portC}/c`]);
      } finally {
        await db.close();
      }
      server = await serverOn(dataDir, receiver.url);
      expect(await metric(server.running.opsUrl, "agentd_events_orphaned")).toBe(3);

      // Through the running server's admin socket.
      const dropped = await runAgentd(["events", "drop", "--sink", `http://127.0.0.1:${portA}/hooks`], { AGENTD_DATA_DIR: dataDir }, { cwd: dataDir });
      expect(dropped, dropped.stderr).toMatchObject({ code: 0, stderr: `dropped 2 undelivered events of http://127.0.0.1:${portA}/hooks\n` });
      expect(await metric(server.running.opsUrl, "agentd_events_orphaned")).toBe(1);
      await server.close();
      server = null;
      // No sink configured at all: no relay runs, and the kept event is still counted.
      server = await startTestServer({ AGENTD_DATA_DIR: dataDir });
      expect(await metric(server.running.opsUrl, "agentd_events_orphaned")).toBe(1);
      await server.close();
      server = null;

      // No server: the CLI opens the database itself.
      const offline = await runAgentd(["events", "drop", "--sink", `http://127.0.0.1:${portC}/c`], { AGENTD_DATA_DIR: dataDir }, { cwd: dataDir });
      expect(offline, offline.stderr).toMatchObject({ code: 0, stderr: `dropped 1 undelivered event of http://127.0.0.1:${portC}/c\n` });
      const again = await runAgentd(["events", "drop", "--sink", `http://127.0.0.1:${portC}/c`], { AGENTD_DATA_DIR: dataDir }, { cwd: dataDir });
      expect(again, again.stderr).toMatchObject({ code: 0, stderr: `dropped 0 undelivered events of http://127.0.0.1:${portC}/c\n` });
      const empty = await runAgentd(["events", "list"], { AGENTD_DATA_DIR: dataDir }, { cwd: dataDir });
      expect(empty).toMatchObject({ code: 0, stdout: "", stderr: "no undelivered events\n" });
      expect(await runAgentd(["events", "list", "--json"], { AGENTD_DATA_DIR: dataDir }, { cwd: dataDir })).toMatchObject({ code: 0, stdout: "[]\n" });
      const bad = await runAgentd(["events", "drop", "--sink", "ftp://127.0.0.1/c"], { AGENTD_DATA_DIR: dataDir }, { cwd: dataDir });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("expected bus or a webhook's http:// or https:// URL");
      expect(receiver.received).toEqual([]);
    } finally {
      await server?.close();
      await receiver.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  it("agentd events list --sink shows a page of a sink's failed events, oldest first, whatever spelling they were stored under, and says how many it leaves out: without a running server", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "agentd-sinks-"));
    await ownDataDir(dataDir, AGENTS);
    const sink = "http://hooks.example/in";
    try {
      const db = await openPglite(dataDir);
      try {
        // 103 failed events, the oldest stored under an older spelling of the URL; 2 never tried; 1 of another sink, failed.
        // Each agent's seq is its number, written newest first: the table's order is not seq order.
        const row = "INSERT INTO event_outbox (seq, event_id, sink, agent_id, name, payload, attempts, last_error) VALUES ($2::bigint, gen_random_uuid(), $1, $2::int, 'agent_paused', '{}', $3, $4)";
        await db.query(row, ["webhook http://other.example/in", 106, 1, "other"]);
        for (const agent of [105, 104]) await db.query(row, [`webhook ${sink}`, agent, 0, null]);
        for (let i = 103; i >= 2; i--) await db.query(row, [`webhook ${sink}`, i, 1, `webhook answered 422 (${i})`]);
        await db.query(row, [`webhook http://hooks.example:80/in`, 1, 2, "webhook answered 500"]);
      } finally {
        await db.close();
      }
      const shown = await runAgentd(["events", "list", "--sink", sink], { AGENTD_DATA_DIR: dataDir }, { cwd: dataDir });
      expect(shown.code, shown.stderr).toBe(0);
      const lines = shown.stdout.trimEnd().split("\n");
      expect(lines).toHaveLength(101);
      expect(lines.slice(1).map((line) => line.split(/ +/)[1])).toEqual(Array.from({ length: 100 }, (_, i) => String(i + 1)));
      expect(lines[1]).toMatch(/ 2 +due +webhook answered 500$/);
      expect(lines[100]).toMatch(/ 1 +due +webhook answered 422 \(100\)$/);
      expect(shown.stderr).toBe(`103 of 105 undelivered events of ${sink} failed (the 3 newest not shown)\n`);
      const json = JSON.parse((await runAgentd(["events", "list", "--sink", sink, "--json"], { AGENTD_DATA_DIR: dataDir }, { cwd: dataDir })).stdout) as { events: unknown[] };
      expect(json).toMatchObject({ sink, pending: 105, failing: 103 });
      expect(json.events).toHaveLength(100);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it("an event a receiver refuses for good holds back its agent's next one there, `agentd events list --sink` shows it and why, until `agentd events drop --event` drops it; then the next goes out", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "agentd-sinks-"));
    await ownDataDir(dataDir, AGENTS);
    const receiver = await startWebhookReceiver();
    // The first event's body is refused for good, as a receiver with a bug in it would.
    receiver.answer = (_index, body) => (body.includes('"stuck"') ? 422 : 204);
    // It says why, on several lines, with a control character, at length: the start of it is kept, on one line.
    const reason = '{"error": "reason \\"stuck\\" is not one we know"}';
    receiver.answerBody = `${reason}\n\t\u0007${"x".repeat(1000)}`;
    // Its first 200 characters on one line: the three control characters become one space.
    const why = `${reason} ${"x".repeat(200 - reason.length - 1)}`;
    let server: TestServer | null = null;
    try {
      server = await serverOn(dataDir, receiver.url);
      expect((await server.call("POST", "/agents/by-number/1001/pause", { body: { reason: "stuck" } })).status).toBe(204);
      expect((await server.call("POST", "/agents/by-number/1001/pause", { body: { reason: "next" } })).status).toBe(204);
      await vi.waitFor(() => expect(receiver.received.length, "the stuck event, retried").toBeGreaterThanOrEqual(2), WAIT);
      expect(receiver.received.every((r) => r.body.includes('"stuck"')), "the next event waits behind it").toBe(true);
      const id = String(receiver.received[0]!.headers["webhook-id"]);
      const agentId = (JSON.parse(receiver.received[0]!.body) as { data: { agent_id: number } }).data.agent_id;

      // The operator's view: which event holds its agent back, how often it failed, and why.
      // (Its second attempt came after the first one's failure was recorded.)
      const failing = await runAgentd(["events", "list", "--sink", receiver.url, "--json"], { AGENTD_DATA_DIR: dataDir }, { cwd: dataDir });
      expect(failing.code, failing.stderr).toBe(0);
      const failures = JSON.parse(failing.stdout) as { events: { attempts: number; recorded: string }[] };
      expect(failures).toMatchObject({
        sink: receiver.url,
        pending: 2,
        failing: 1,
        events: [{ event: id, agent: agentId, name: "agent_paused", lastError: `webhook answered 422: ${why}` }],
      });
      expect(failures.events[0]!.attempts).toBeGreaterThanOrEqual(1);
      const shown = await runAgentd(["events", "list", "--sink", receiver.url.replace("http://", "HTTP://")], { AGENTD_DATA_DIR: dataDir }, { cwd: dataDir });
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toMatch(new RegExp(`^EVENT +AGENT +NAME +RECORDED +ATTEMPTS +NEXT TRY +LAST ERROR\\n${id} +${agentId} +agent_paused +${failures.events[0]!.recorded} +\\d+ +\\S+ +webhook answered 422: `));
      expect(shown.stdout.endsWith(` webhook answered 422: ${why}\n`), shown.stdout).toBe(true);
      expect(shown.stderr).toBe(`1 of 2 undelivered events of ${receiver.url} failed\n`);

      const malformed = await runAgentd(["events", "drop", "--sink", receiver.url, "--event", "not-a-uuid"], { AGENTD_DATA_DIR: dataDir }, { cwd: dataDir });
      expect(malformed.code).toBe(2);
      expect(malformed.stderr).toContain("expected an event id, a UUID");
      // --force is for a whole queue: with --event it would mean nothing, so it is refused.
      const both = await runAgentd(["events", "drop", "--sink", receiver.url, "--event", id, "--force"], { AGENTD_DATA_DIR: dataDir }, { cwd: dataDir });
      expect(both.code).toBe(2);
      expect(both.stderr).toMatch(/option '--event <id>' cannot be used with option '--force'/);
      // A configured sink: one event named by its id needs no --force.
      const dropped = await runAgentd(["events", "drop", "--sink", receiver.url, "--event", id.toUpperCase()], { AGENTD_DATA_DIR: dataDir }, { cwd: dataDir });
      expect(dropped, dropped.stderr).toMatchObject({ code: 0, stderr: `dropped event ${id} of ${receiver.url}\n` });
      await vi.waitFor(() => expect(receiver.received.some((r) => r.body.includes('"next"')), "the next event, delivered").toBe(true), WAIT);
      await vi.waitFor(async () => expect(await metric(server!.running.opsUrl, "agentd_events_pending")).toBe(0), WAIT);
      const again = await runAgentd(["events", "drop", "--sink", receiver.url, "--event", id], { AGENTD_DATA_DIR: dataDir }, { cwd: dataDir });
      // Gone: naming it again fails, as revoking an unknown token does.
      expect(again, again.stderr).toMatchObject({ code: 1, stderr: `agentd: no undelivered event ${id} of ${receiver.url}\n` });
      const none = await runAgentd(["events", "list", "--sink", receiver.url], { AGENTD_DATA_DIR: dataDir }, { cwd: dataDir });
      expect(none).toMatchObject({ code: 0, stdout: "", stderr: `no failed delivery to ${receiver.url} (0 undelivered events)\n` });
    } finally {
      await server?.close();
      await receiver.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});

// Skipped only on a developer's machine without PostgreSQL, saying so (postgresTestUrl throws in CI).
if (postgresTestUrl() === undefined) console.warn("AGENTD_TEST_DATABASE_URL is not set: skipping the PostgreSQL test of events across configuration changes");
describe.runIf(postgresTestUrl() !== undefined)("events survive configuration changes (PostgreSQL)", () => {
  it("a server takes in events an older version stored under another spelling, logs and counts the others, and agentd events drop removes them", async () => {
    const database = await freshPostgres();
    const dir = mkdtempSync(path.join(tmpdir(), "agentd-sinks-pg-"));
    const receiver = await startWebhookReceiver();
    const portC = await freePort();
    // The query may carry the receiver's secret: it never reaches the log.
    const gone = `http://127.0.0.1:${portC}/gone?key=s3cret`;
    const env = { AGENTD_DATA_DIR: dir, AGENTD_DATABASE_URL: database.location, AGENTD_ADMIN_TOKEN: "sinks-test-admin-token-0123456789" };
    let agentd: Awaited<ReturnType<typeof spawnAgentd>> | null = null;
    try {
      const db = await database.openMigrated();
      await new SqlAgentStore(db, await readOriginUuid(db, null)).upsert(AGENTS);
      await pauseAsAnOlderVersion(db, "older", [`webhook ${receiver.url.replace("http://", "HTTP://").replace("/hooks", "/x/../hooks")}`, `webhook ${gone}`]);
      // The kept event had failed before its sink was removed, with a reason on two lines.
      await db.query("UPDATE event_outbox SET attempts = 3, not_before = now() + interval '1 hour', last_error = $2 WHERE sink = $1", [
        `webhook ${gone}`,
        "connect ECONNREFUSED\n127.0.0.1",
      ]);
      await db.close();

      agentd = await spawnAgentd({ ...env, AGENTD_WEBHOOK_URLS: receiver.url, ...FAST }, { cwd: dir });
      await vi.waitFor(() => expect(receiver.received.length, "the event stored under another spelling").toBeGreaterThanOrEqual(1), WAIT);
      expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({ name: "agent_paused", data: { agent_number: "1001", paused_reason: "older" } });
      expect(await metric(agentd.opsUrl, "agentd_events_orphaned")).toBe(1);
      const warnings = agentd
        .logs()
        .split("\n")
        .filter((line) => line.includes("not configured"))
        .map((line) => JSON.parse(line) as { level: number; sink: string; events: number });
      expect(warnings).toEqual([expect.objectContaining({ level: 40, sink: `http://127.0.0.1:${portC}/gone?…`, events: 1 })]);
      expect(agentd.logs()).not.toContain("s3cret");

      const list = await runAgentd(["events", "list"], env, { cwd: dir });
      expect(list.code, list.stderr).toBe(0);
      expect(list.stdout).toMatch(new RegExp(`^PENDING +OLDEST +SINK STATE +SINK\\n1 +\\S+ +not configured +${gone.replace(/[?.]/g, "\\$&")}\\n$`));
      const failed = await runAgentd(["events", "list", "--sink", gone, "--json"], env, { cwd: dir });
      expect(failed.code, failed.stderr).toBe(0);
      const failures = JSON.parse(failed.stdout) as { events: { nextTry: string }[] };
      expect(failures).toMatchObject({ sink: gone, pending: 1, failing: 1, events: [{ agent: 1, name: "agent_paused", attempts: 3, lastError: "connect ECONNREFUSED\n127.0.0.1" }] });
      expect(Date.parse(failures.events[0]!.nextTry)).toBeGreaterThan(Date.now());
      const table = await runAgentd(["events", "list", "--sink", gone], env, { cwd: dir });
      expect(table.stdout.split("\n")[1]).toMatch(new RegExp(` 3 +${failures.events[0]!.nextTry.replace(/\./g, "\\.")} +connect ECONNREFUSED 127\\.0\\.0\\.1$`));
      const dropped = await runAgentd(["events", "drop", "--sink", gone], env, { cwd: dir });
      expect(dropped, dropped.stderr).toMatchObject({ code: 0, stderr: `dropped 1 undelivered event of ${gone}\n` });
      expect(await metric(agentd.opsUrl, "agentd_events_orphaned")).toBe(0);
      expect(await metric(agentd.opsUrl, "agentd_events_pending")).toBe(0);
    } finally {
      await agentd?.kill("SIGTERM");
      await receiver.close();
      await database.cleanup();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
