// The operator listener (/healthz, /readyz, /metrics): scraped by a real
// Prometheus (Debian's package, installed by .ci/run), checked by promtool,
// readiness following PostgreSQL and the auth service as they are cut and
// restored, and the drain a load balancer sees on SIGTERM.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { repoRoot } from "../devkit/root.js";
import { run } from "../devkit/run.js";
import { adminSocketPath, callAdminChannel } from "../server/admin/channel.js";
import { AuthService } from "../devkit/auth-service.js";
import { freshPostgres, postgresTestUrl, type TestDatabase } from "./helpers/databases.js";
import { freePort } from "../devkit/ports.js";
import { SUITE_AGENTS, suiteAgents } from "./helpers/agents.js";
import { ownDataDir } from "./helpers/data-dir.js";
import { spawnAgentd } from "./helpers/process.js";
import { ADMIN_TOKEN, startTestServer, type TestServer } from "./helpers/server.js";
import { startTcpProxy, type TcpProxy } from "./helpers/tcp-proxy.js";

const pgUrl = postgresTestUrl();

async function get(url: string): Promise<{ status: number; text: string; json: any }> {
  const response = await fetch(url);
  const text = await response.text();
  const json = (response.headers.get("content-type") ?? "").includes("json") ? JSON.parse(text) : undefined;
  return { status: response.status, text, json };
}

/** /readyz of `opsUrl` once it answers `status` (vi.waitFor asks again until it does, 30 s at most); the answer. */
function readyzOnce(opsUrl: string, status: number, timeout = 30_000): Promise<{ status: number; text: string; json: any }> {
  return vi.waitFor(
    async () => {
      const answer = await get(`${opsUrl}/readyz`);
      expect(answer.status, answer.text).toBe(status);
      return answer;
    },
    { timeout, interval: 250 },
  );
}

/** The label sets of every sample in a Prometheus text exposition, e.g. `{operation="listAgents",status="200"}`. */
function labelSets(text: string, metric: string): string[] {
  return text
    .split("\n")
    .filter((line) => line.startsWith(`${metric}{`))
    .map((line) => line.slice(metric.length, line.indexOf("}") + 1));
}

describe("metrics, scraped by a real Prometheus", () => {
  let server: TestServer;
  let work: string;
  let prometheus: ChildProcess | undefined;

  beforeAll(async () => {
    server = await startTestServer({}, suiteAgents());
    work = await mkdtemp(path.join(tmpdir(), "agentd-ops-"));
  });
  afterAll(async () => {
    prometheus?.kill("SIGKILL");
    await server?.close();
    await rm(work, { recursive: true, force: true });
  });

  const metrics = async (): Promise<string> => (await get(`${server.running.opsUrl}/metrics`)).text;

  it("serves /healthz, and /readyz while the database answers", async () => {
    expect(server.running.opsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await get(`${server.running.opsUrl}/healthz`)).toMatchObject({ status: 200, json: { status: "ok" } });
    expect(await get(`${server.running.opsUrl}/readyz`)).toMatchObject({
      status: 200,
      json: { status: "ready", checks: { database: "ok" } },
    });
    expect((await get(`${server.running.opsUrl}/agents`)).status).toBe(404);
    // Nothing has failed yet: an alert on this counter stays quiet through a start.
    expect(await metrics()).toMatch(/^agentd_db_errors_total 0$/m);
  });

  it("passes `promtool check metrics`, with the build, request, database and auth metrics", async () => {
    expect((await server.call("GET", `/agents/by-number/${SUITE_AGENTS.pausable.number}`)).status).toBe(200);
    expect((await server.call("GET", `/agents/by-number/${SUITE_AGENTS.pausable.number}`, { token: "made-up" })).status).toBe(401);
    const text = await metrics();
    for (const name of [
      "agentd_build_info",
      "agentd_http_requests_total",
      "agentd_http_request_duration_seconds_bucket",
      "agentd_db_query_duration_seconds_bucket",
      "agentd_db_errors_total",
      "agentd_auth_checks_total",
      "agentd_auth_cache_hits_total",
      "agentd_rate_limited_total",
      "process_resident_memory_bytes",
    ]) {
      expect(text, name).toMatch(new RegExp(`^${name}[ {]`, "m"));
    }
    expect(text).toMatch(/^agentd_build_info\{version="17\.5\.0",release="17\.05"\} 1$/m);
    expect(text).toMatch(/^agentd_auth_checks_total\{result="unknown_token"\} [1-9]/m);
    const check = await run("promtool", ["check", "metrics"], { input: text });
    expect(check.stdout + check.stderr).toBe("");
    expect(check.code).toBe(0);
  });

  it("a Prometheus server scrapes it, and PromQL returns the requests this test made", async () => {
    const before = Number(/^agentd_http_requests_total\{operation="getAgentById",status="200"\} (\d+)$/m.exec(await metrics())?.[1] ?? 0);
    const made = 7;
    for (let i = 0; i < made; i++) expect((await server.call("GET", `/agents/by-id/${SUITE_AGENTS.pausable.id}`)).status).toBe(200);

    const port = await freePort();
    const config = path.join(work, "prometheus.yml");
    await writeFile(
      config,
      [
        "global:",
        "  scrape_interval: 1s",
        "scrape_configs:",
        "  - job_name: agentd",
        "    static_configs:",
        `      - targets: ["${new URL(server.running.opsUrl!).host}"]`,
        "",
      ].join("\n"),
    );
    prometheus = spawn(
      "prometheus",
      [`--config.file=${config}`, `--storage.tsdb.path=${path.join(work, "tsdb")}`, `--web.listen-address=127.0.0.1:${port}`],
      { stdio: "ignore" },
    );
    const query = async (): Promise<number | null> => {
      try {
        const promql = `sum(agentd_http_requests_total{job="agentd",operation="getAgentById",status="200"})`;
        const answer = await get(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(promql)}`);
        const value = answer.json?.data?.result?.[0]?.value?.[1];
        return value === undefined ? null : Number(value);
      } catch {
        return null; // not listening yet
      }
    };
    await expect.poll(query, { timeout: 60_000, interval: 250 }).toBe(before + made);
  });

  it("keeps labels bounded: 1,000 requests to made-up paths add no operation label", async () => {
    const operations = (text: string) => new Set(labelSets(text, "agentd_http_requests_total").map((set) => /operation="([^"]*)"/.exec(set)?.[1]));
    expect((await server.call("GET", "/no/such/thing")).status).toBe(404);
    const before = operations(await metrics());
    for (let i = 0; i < 1000; i++) {
      const answer = await server.call(i % 2 ? "GET" : "DELETE", `/made-up/${i}/${Math.random().toString(36).slice(2)}`);
      expect(answer.status).toBe(404);
    }
    const after = operations(await metrics());
    expect([...after].sort()).toEqual([...before].sort());
    expect(after.has("unknown")).toBe(true);
    expect([...after].every((op) => op === "unknown" || /^[a-z][A-Za-z]+$/.test(op ?? ""))).toBe(true);
  });

  it("counts a request the body parser refuses under its operation, not as unknown", async () => {
    const pause = `/agents/by-number/${SUITE_AGENTS.pausable.number}/pause`;
    const count = (text: string, status: number) =>
      Number(new RegExp(`^agentd_http_requests_total\\{operation="pauseAgentByNumber",status="${status}"\\} (\\d+)$`, "m").exec(text)?.[1] ?? 0);
    const unknown = (text: string) =>
      text
        .split("\n")
        .filter((line) => line.startsWith('agentd_http_requests_total{operation="unknown"'))
        .reduce((sum, line) => sum + Number(line.split(" ").at(-1)), 0);
    const before = await metrics();
    const refusals = [
      { status: 400, headers: { "content-type": "application/json" }, rawBody: "{not json" },
      { status: 415, headers: { "content-type": "text/plain" }, rawBody: "lunch" },
      { status: 413, headers: { "content-type": "application/json" }, rawBody: JSON.stringify({ reason: "x".repeat(64 * 1024) }) },
    ];
    for (const { status, ...options } of refusals) expect((await server.call("POST", `${pause}?any=query`, options)).status).toBe(status);
    const after = await metrics();
    for (const status of [400, 415, 413]) expect(count(after, status) - count(before, status), String(status)).toBe(1);
    expect(unknown(after)).toBe(unknown(before));
  });

  // Found by an observability walk: a request whose client left before its
  // answer counted as status="200", which this operation never answered.
  it("counts a request its client gave up on as aborted, not as the 200 Node's response starts with", async () => {
    const count = (text: string, status: string) =>
      Number(new RegExp(`^agentd_http_requests_total\\{operation="pauseAgentByNumber",status="${status}"\\} (\\d+)$`, "m").exec(text)?.[1] ?? 0);
    const before = await metrics();
    const url = new URL(server.url);
    const socket = tls.connect({ host: url.hostname, port: Number(url.port), ca: server.ca });
    await once(socket, "secureConnect");
    // Half a body: the request waits in the body parser when the client leaves.
    const body = JSON.stringify({ reason: "coffee" });
    socket.write(
      [
        `POST ${url.pathname}/agents/by-number/${SUITE_AGENTS.pausable.number}/pause HTTP/1.1`,
        `Host: ${url.host}`,
        `X-Auth-Token: ${ADMIN_TOKEN}`,
        "Content-Type: application/json",
        `Content-Length: ${body.length}`,
        "",
        body.slice(0, 5),
      ].join("\r\n"),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket.destroy();
    await expect.poll(async () => count(await metrics(), "aborted") - count(before, "aborted")).toBe(1);
    const after = await metrics();
    // The body parser answers the request it saw end early with a 400, to no one.
    for (const status of ["200", "204", "400"]) expect(count(after, status) - count(before, status), status).toBe(0);
  });

  it("holds no secret: no token, no ACL, no agent number", async () => {
    const token = await server.createToken(["agentd.agents.by-number.8675309.read"]);
    const agent = { id: 86, number: "8675309", extension: null, context: null, logged: false, paused: false, paused_reason: null, state_interface: null };
    expect(await callAdminChannel(adminSocketPath(server.config.dataDir), { op: "import", text: JSON.stringify([agent]) })).toMatchObject({ ok: true });
    expect((await server.call("GET", "/agents/by-number/8675309", { token })).status).toBe(200);
    expect((await server.call("GET", "/agents/by-id/86", { token })).status).toBe(403);
    const text = await metrics();
    expect(text).not.toContain(token);
    expect(text).not.toContain(ADMIN_TOKEN);
    expect(text).not.toContain("agentd.agents");
    expect(text).not.toContain("8675309");
  });
});

describe("readiness follows the external auth service", () => {
  let auth: AuthService;
  let server: TestServer;
  beforeAll(async () => {
    auth = new AuthService(new Map([[ADMIN_TOKEN, ["agentd.#"]]]));
    await auth.start();
    // The database keeps its default bound: only the auth service goes away here,
    // and a shorter bound could fail the database's own check on a loaded machine.
    server = await startTestServer({ AGENTD_AUTH_URL: auth.url, AGENTD_AUTH_TIMEOUT: "500ms" });
  });
  afterAll(async () => {
    await server?.close();
    await auth?.stop();
  });

  it("503 naming auth while it is down, 200 again once it is back", async () => {
    const opsUrl = server.running.opsUrl!;
    expect(await readyzOnce(opsUrl, 200)).toMatchObject({ json: { checks: { database: "ok", auth: "ok" } } });
    const port = Number(new URL(auth.url).port);
    await auth.stop();
    const down = await readyzOnce(opsUrl, 503);
    expect(down.json).toMatchObject({ status: "not ready", checks: { database: "ok" } });
    expect(down.json.checks.auth).not.toBe("ok");
    await auth.start(port);
    expect((await readyzOnce(opsUrl, 200)).json).toEqual({ status: "ready", checks: { database: "ok", auth: "ok" } });
  });
});

describe.skipIf(pgUrl === undefined)("readiness follows PostgreSQL", () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let server: TestServer;
  beforeAll(async () => {
    db = await freshPostgres();
    const direct = new URL(db.location);
    proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    const proxied = new URL(db.location);
    proxied.hostname = "127.0.0.1";
    proxied.port = String(proxy.port);
    // Short enough that a blackholed database turns /readyz 503 soon, long enough
    // that the start's statements do not run past it on a loaded machine.
    server = await startTestServer({ AGENTD_DATABASE_URL: proxied.toString(), AGENTD_DB_TIMEOUT: "3s" });
  });
  afterAll(async () => {
    await proxy?.restore();
    await server?.close();
    await proxy?.close();
    await db?.cleanup();
  });

  it.each(["refuse", "blackhole"] as const)("503 naming the database while it is cut (%s), 200 once it is back", async (mode) => {
    const opsUrl = server.running.opsUrl!;
    await readyzOnce(opsUrl, 200);
    await proxy.cut(mode);
    const down = await readyzOnce(opsUrl, 503);
    expect(down.json.status).toBe("not ready");
    expect(down.json.checks.database).not.toBe("ok");
    // Found by an observability walk: the event backlog's query failed the
    // whole scrape (500), and every metric of the outage was lost.
    const dbErrors = (text: string) => Number(/^agentd_db_errors_total (\d+)$/m.exec(text)?.[1]);
    const first = await get(`${opsUrl}/metrics`);
    const scrape = await get(`${opsUrl}/metrics`);
    expect(scrape.status, scrape.text).toBe(200);
    // prom-client writes NaN as "Nan", which Prometheus reads as NaN.
    expect(scrape.text).toMatch(/^agentd_events_pending nan$/im);
    // The scrape's own failed read is counted (nothing else asks the database between two scrapes here).
    expect(dbErrors(scrape.text)).toBeGreaterThan(dbErrors(first.text));
    const check = await run("promtool", ["check", "metrics"], { input: scrape.text });
    expect(check.stdout + check.stderr).toBe("");
    await proxy.restore();
    expect((await readyzOnce(opsUrl, 200)).json).toEqual({ status: "ready", checks: { database: "ok" } });
  });
});

describe("drain on SIGTERM", () => {
  // The drain is longer than the shutdown time-out plus the process's own
  // safety margin: the process's bound on a stop must count the drain too.
  it("/readyz turns 503 at once while the API still answers, then the process exits 0, a drain longer than the shutdown time-out included", async () => {
    const cwd = await mkdtemp(path.join(tmpdir(), "agentd-drain-"));
    try {
      const agent = SUITE_AGENTS.pausable;
      await ownDataDir(cwd, [agent]);
      const agentd = await spawnAgentd({ AGENTD_DATA_DIR: cwd, AGENTD_DRAIN_DELAY: "5s", AGENTD_SHUTDOWN_TIMEOUT: "500ms", AGENTD_ADMIN_TOKEN: ADMIN_TOKEN }, { cwd });
      expect((await get(`${agentd.opsUrl}/readyz`)).status).toBe(200);
      agentd.child.kill("SIGTERM");
      const draining = await readyzOnce(agentd.opsUrl!, 503, 2_000);
      expect(draining.json).toEqual({ status: "draining" });
      const answer = await agentd.call("GET", `/agents/by-id/${agent.id}`, { token: ADMIN_TOKEN });
      expect(answer.status).toBe(200);
      expect(await agentd.exited()).toEqual({ code: 0, signal: null });
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });
});

describe("the README's alert rules", () => {
  it("pass `promtool check rules`, the AgentdDown rule on `up` included", async () => {
    const readme = await readFile(path.join(repoRoot, "README.md"), "utf8");
    const rules = /```yaml\n(groups:[^]*?)```/.exec(readme)?.[1];
    expect(rules).toContain('expr: up{job="agentd"} == 0');
    const work = await mkdtemp(path.join(tmpdir(), "agentd-rules-"));
    try {
      await writeFile(path.join(work, "rules.yml"), rules!);
      const check = await run("promtool", ["check", "rules", path.join(work, "rules.yml")]);
      expect(check.stdout + check.stderr).toMatch(/SUCCESS: 5 rules found/);
      expect(check.code).toBe(0);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });
});

describe("promtool and prometheus are installed (.ci/run installs Debian's prometheus)", () => {
  it("promtool answers", async () => {
    const { code, stdout, stderr } = await run("promtool", ["--version"]);
    expect(code, stderr).toBe(0);
    expect(stdout + stderr).toMatch(/promtool, version/);
  });
});
