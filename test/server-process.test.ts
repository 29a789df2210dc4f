// `agentd` as an operator runs it: real child processes on a real data
// directory, talking HTTPS, with the admin CLI beside them.
import { X509Certificate } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import tls from "node:tls";
import { generate } from "selfsigned";
import { Agent } from "undici";
import { BASE_PATH } from "../server/contract.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { adminSocketPath } from "../server/admin/channel.js";
import { migrate, MIGRATIONS } from "../server/db/migrations.js";
import { openPostgres } from "../server/db/postgres.js";
import { DEMO_AGENTS } from "../server/store/seed.js";
import { hashToken } from "../server/store/sql-token-store.js";
import { SUITE_AGENTS, suiteAgents } from "./helpers/agents.js";
import { ownDataDir } from "./helpers/data-dir.js";
import { callHttps } from "./helpers/https.js";
import { freePort } from "../devkit/ports.js";
import { repoRoot } from "../devkit/root.js";
import { freshPostgres, postgresTestUrl, type TestDatabase } from "./helpers/databases.js";
import { runAgentd, spawnAgentd, type AgentdProcess } from "./helpers/process.js";
import { startTcpProxy } from "./helpers/tcp-proxy.js";
import { ADMIN_TOKEN, startTestServer, type TestServer } from "./helpers/server.js";

/** `agentd <args>` with this data directory, run to completion; `input` on its standard input. */
function agentd(args: string[], dataDir: string, env: Record<string, string> = {}, input?: string) {
  return runAgentd(args, { AGENTD_DATA_DIR: dataDir, ...env }, { cwd: dataDir, ...(input === undefined ? {} : { input }) });
}

/**
 * `agentd token list`, as a table and as JSON, shows the token `id` with
 * its ACLs and expiry (set or not), and none of the `secrets` or their
 * hashes, whole or in part.
 */
async function expectListed(dataDir: string, expected: { id: string; acls: string[]; expires: boolean }, secrets: string[], env: Record<string, string> = {}) {
  const table = await agentd(["token", "list"], dataDir, env);
  expect(table.code, table.stderr).toBe(0);
  const [header, ...lines] = table.stdout.trimEnd().split("\n");
  expect(header).toMatch(/^ID +EXPIRES +CREATED +ACL$/);
  const line = lines.find((l) => l.startsWith(`${expected.id} `));
  expect(line, table.stdout).toBeDefined();
  expect(line).toContain(expected.acls.join(" "));
  expect(line).toMatch(expected.expires ? new RegExp(`^${expected.id} +\\d{4}-\\d\\d-\\d\\dT`) : new RegExp(`^${expected.id} +never `));

  const json = await agentd(["token", "list", "--json"], dataDir, env);
  expect(json.code, json.stderr).toBe(0);
  const listed = JSON.parse(json.stdout);
  expect(listed.find((t: { id: string }) => t.id === expected.id)).toEqual({
    id: expected.id,
    acls: expected.acls,
    expiresAt: expected.expires ? expect.stringMatching(/^\d{4}-/) : null,
    createdAt: expect.stringMatching(/^\d{4}-/),
  });
  for (const secret of secrets) {
    const hash = hashToken(secret);
    for (const output of [table.stdout, table.stderr, json.stdout]) {
      expect(output).not.toContain(secret);
      expect(output).not.toContain(hash.slice(0, 8));
    }
  }
}

/**
 * A token made by `agentd token create <options>` through `run`, which must
 * exit 0: the secret it prints on stdout and the id it names on stderr
 * (`token id: …`).
 */
async function createToken(
  run: (args: string[]) => ReturnType<typeof runAgentd>,
  options: string[],
): Promise<{ token: string; id: string }> {
  const created = await run(["token", "create", ...options]);
  expect(created.code, created.stderr).toBe(0);
  const id = /token id: ([0-9a-f]{12})/.exec(created.stderr)?.[1];
  expect(id, created.stderr).toBeDefined();
  return { token: created.stdout.trim(), id: id! };
}

/** `agentd serve` on this data directory, with JSON logs at the default level. */
function serve(dataDir: string, env: Record<string, string> = {}): Promise<AgentdProcess> {
  return spawnAgentd({ AGENTD_DATA_DIR: dataDir, AGENTD_LOG_LEVEL: "info", ...env }, { cwd: dataDir });
}

const pgUrl = postgresTestUrl();

// The suite's own agents, put in the data directory before the first start
// (no demo seed); the demo seed itself is checked by the admin CLI's test below.
const { pausable, bystander } = SUITE_AGENTS;

describe("agentd serve on the embedded defaults", () => {
  let dataDir: string;
  let port: number;
  let served: AgentdProcess;
  let adminToken: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "agentd-proc-"));
    await ownDataDir(dataDir, suiteAgents());
    port = await freePort();
    served = await serve(dataDir, { AGENTD_PORT: String(port) });
  });
  afterAll(async () => {
    if (served?.alive()) await served.kill("SIGTERM");
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("prints the base URL, the certificate with its fingerprint, and a working admin token on the first start", async () => {
    const banner = served.output();
    expect(served.url).toBe(`https://127.0.0.1:${port}/1.0`);
    const certPath = /certificate: (\S+)/.exec(banner)?.[1];
    expect(certPath).toBe(path.join(dataDir, "tls/cert.pem"));
    expect(banner).toContain("events:      none (AGENTD_WEBHOOK_URLS, AGENTD_BUS_URL)\n");
    const fingerprint = /SHA-256: +(\S+)/.exec(banner)?.[1];
    expect(fingerprint).toBe(new X509Certificate(readFileSync(certPath!)).fingerprint256);
    adminToken = /shown only this once: (\S+)/.exec(banner)?.[1] ?? "";
    expect(adminToken).toMatch(/^[A-Za-z0-9_-]{32,}$/);

    // The same request the banner suggests with curl, through `localhost` as in the README.
    const trusting = new Agent({ connect: { ca: readFileSync(certPath!, "utf8") } });
    const answer = await callHttps(trusting, "GET", `https://localhost:${port}/1.0/agents`, { token: adminToken });
    await trusting.close();
    expect(answer.status).toBe(200);
    expect(answer.json.map((agent: { number: string }) => agent.number)).toEqual(suiteAgents().map((agent) => agent.number));
  });

  it("never writes a token to its logs", async () => {
    await served.call("GET", "/agents", { token: adminToken });
    await served.call("GET", `/agents/by-id/${pausable.id}`, { token: "a-wrong-token-that-must-not-be-logged" });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const logs = served.logs();
    expect(logs).toContain('"statusCode":401');
    expect(logs).not.toContain(adminToken);
    expect(logs).not.toContain("a-wrong-token-that-must-not-be-logged");
    for (const line of logs.trim().split("\n")) {
      expect(() => JSON.parse(line), line).not.toThrow();
    }
    // Who asked: the peer's address and, for a valid embedded token, its id (as token list shows it).
    const requests = logs.trim().split("\n").map((line) => JSON.parse(line) as { url?: string; statusCode?: number; client?: string; tokenId?: string }).filter((line) => line.url !== undefined);
    const listed = requests.find((line) => line.url === "/1.0/agents" && line.statusCode === 200);
    expect(listed).toMatchObject({ client: expect.stringMatching(/^(::ffff:)?127\.0\.0\.1$/), tokenId: expect.stringMatching(/^[0-9a-f]{12}$/) });
    const ids = JSON.parse((await agentd(["token", "list", "--json"], dataDir)).stdout) as { id: string }[];
    expect(ids.map((token) => token.id)).toContain(listed!.tokenId);
    expect(requests.find((line) => line.statusCode === 401)).not.toHaveProperty("tokenId");
  });

  // A client that sends its body at once, as fetch does, reads the 413 and not
  // a reset connection: in a process of its own, the server's early answer and
  // close raced the client's writes (EPIPE 2 to 4 times in 8 at 5 MB).
  it("a body over the limit, sent at once, gets its 413 every time", async () => {
    const trusting = new Agent({ connect: { ca: readFileSync(path.join(dataDir, "tls/cert.pem"), "utf8") } });
    const body = JSON.stringify({ reason: "x".repeat(5 * 1024 * 1024) });
    try {
      for (let i = 0; i < 8; i++) {
        const answer = await fetch(`${served.url}/agents/by-number/${pausable.number}/pause`, {
          method: "POST",
          headers: { "X-Auth-Token": adminToken, "Content-Type": "application/json" },
          body,
          dispatcher: trusting,
        } as RequestInit);
        expect(answer.status, `try ${i}`).toBe(413);
        expect(await answer.json()).toEqual({ error: "payload too large" });
      }
    } finally {
      await trusting.close();
    }
  });

  it("refuses a plain-HTTP request on its port", async () => {
    const outcome = await new Promise<string>((resolve) => {
      const req = http.get({ host: "127.0.0.1", port, path: `${BASE_PATH}/agents`, timeout: 5_000 }, (res) =>
        resolve(`answered ${res.statusCode}`),
      );
      req.on("error", (err) => resolve(`refused: ${err.message}`));
      req.on("timeout", () => {
        req.destroy();
        resolve("refused: timeout");
      });
    });
    expect(outcome).toMatch(/^refused/);
  });

  it("refuses TLS below 1.2", async () => {
    const outcome = await new Promise<string>((resolve) => {
      const socket = tls.connect({ host: "127.0.0.1", port, maxVersion: "TLSv1.1", minVersion: "TLSv1", rejectUnauthorized: false });
      socket.on("secureConnect", () => {
        socket.destroy();
        resolve("connected");
      });
      socket.on("error", (err) => resolve(`refused: ${err.message}`));
    });
    expect(outcome).toMatch(/^refused/);
  });

  it("keeps its admin socket private to its owner", () => {
    const socket = adminSocketPath(dataDir);
    expect(statSync(socket).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(socket)).mode & 0o777).toBe(0o700);
  });

  it("refuses a second `agentd serve` on the same data directory, and the first keeps serving", async () => {
    const second = await agentd(["serve"], dataDir, { AGENTD_PORT: String(await freePort()) });
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/data directory .* is in use by another agentd process/);
    expect((await served.call("GET", "/agents", { token: adminToken })).status).toBe(200);
  });

  it("creates, lists and revokes tokens through the running server, never showing a secret but once", async () => {
    const inDataDir = (args: string[]) => agentd(args, dataDir);
    const { token, id } = await createToken(inDataDir, ["--acl", "agentd.agents.read", "--ttl", "1h"]);
    expect((await served.call("GET", "/agents", { token })).status).toBe(200);
    expect((await served.call("GET", `/agents/by-id/${pausable.id}`, { token })).status).toBe(403);
    const { token: secondToken, id: secondId } = await createToken(inDataDir, ["--acl", "agentd.agents.read"]);

    await expectListed(dataDir, { id, acls: ["agentd.agents.read"], expires: true }, [token, secondToken, adminToken]);
    await expectListed(dataDir, { id: secondId, acls: ["agentd.agents.read"], expires: false }, [token, secondToken, adminToken]);

    // The secret on standard input, as the README says, not on the command line.
    const revoked = await agentd(["token", "revoke"], dataDir, {}, `${token}\n`);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stderr).not.toContain("warning");
    expect((await served.call("GET", "/agents", { token })).status).toBe(401);
    const again = await agentd(["token", "revoke", "-"], dataDir, {}, token);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("no such token");

    const byId = await agentd(["token", "revoke", "--id", secondId], dataDir);
    expect(byId.code, byId.stderr).toBe(0);
    expect((await served.call("GET", "/agents", { token: secondToken })).status).toBe(401);
    const list = await agentd(["token", "list", "--json"], dataDir);
    const ids = JSON.parse(list.stdout).map((t: { id: string }) => t.id);
    expect(ids).not.toContain(id);
    expect(ids).not.toContain(secondId);
    expect((await served.call("GET", "/agents", { token: adminToken })).status).toBe(200);

    // The argument still works, for old scripts, with a warning.
    const { token: third } = await createToken(inDataDir, ["--acl", "agentd.agents.read"]);
    const onCommandLine = await agentd(["token", "revoke", third], dataDir);
    expect(onCommandLine.code, onCommandLine.stderr).toBe(0);
    expect(onCommandLine.stderr).toMatch(/warning: a token on the command line shows in ps/);
    expect((await served.call("GET", "/agents", { token: third })).status).toBe(401);
    // One that starts with "-" (only older tokens can) is read as the token after "--".
    const dashed = await agentd(["token", "revoke", "--", "-made-before-the-rule"], dataDir);
    expect(dashed.code, dashed.stderr).toBe(1);
    expect(dashed.stderr).toContain("no such token");
  });

  it("refuses a revoke with nothing to revoke or two things to revoke (exit 2)", async () => {
    const nothing = await agentd(["token", "revoke"], dataDir);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain("no token on standard input");
    const both = await agentd(["token", "revoke", "--id", "0123456789ab", "some-token"], dataDir);
    expect(both.code).toBe(2);
    const unknown = await agentd(["token", "revoke", "--id", "0123456789ab"], dataDir);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("no such token");
  });

  it("imports a good file through the running server, and a bad file changes nothing", async () => {
    const good = path.join(dataDir, "good.json");
    writeFileSync(
      good,
      JSON.stringify([
        { id: 50, number: "5050", extension: "5050", context: "support", logged: true, paused: false, paused_reason: null, state_interface: "PJSIP/zoe" },
        { id: 51, number: "5051", extension: null, context: null, logged: false, paused: false, paused_reason: null, state_interface: null },
      ]),
    );
    const imported = await agentd(["import", good], dataDir);
    expect(imported.code, imported.stderr).toBe(0);
    expect((await served.call("GET", "/agents/by-number/5050", { token: adminToken })).json).toMatchObject({ id: 50, logged: true });

    const before = (await served.call("GET", "/agents", { token: adminToken })).json;
    const bad = path.join(dataDir, "bad.json");
    writeFileSync(
      bad,
      JSON.stringify([
        { id: 50, number: "5050", extension: "9", context: "x", logged: true, paused: true, paused_reason: "renamed", state_interface: "PJSIP/zoe" },
        { id: 52, number: "50a", extension: null, context: null, logged: false, paused: false, paused_reason: null, state_interface: null },
      ]),
    );
    const rejected = await agentd(["import", bad], dataDir);
    expect(rejected.code).toBe(1);
    expect(rejected.stderr).toContain("[1].number");
    expect((await served.call("GET", "/agents", { token: adminToken })).json).toEqual(before);

    const unreadable = await agentd(["import", path.join(dataDir, "missing.json")], dataDir);
    expect(unreadable.code).toBe(1);
    expect(unreadable.stderr).toContain("cannot read");
  });

  it("finishes a request in flight on SIGTERM, then exits 0 with the pause durable", async () => {
    // A pause whose body arrives slowly is in flight when the signal lands.
    const ca = readFileSync(path.join(dataDir, "tls/cert.pem"), "utf8");
    const body = JSON.stringify({ reason: "in flight" });
    const pause = (number: string, text: string) =>
      `POST ${BASE_PATH}/agents/by-number/${number}/pause HTTP/1.1\r\nHost: localhost\r\nX-Auth-Token: ${adminToken}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${text.length}\r\n\r\n${text}`;
    let response = "";
    const socket = tls.connect({ host: "127.0.0.1", port, ca, servername: "localhost" });
    socket.on("data", (chunk) => (response += chunk));
    socket.on("error", () => undefined);
    const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
    await new Promise((resolve) => socket.once("secureConnect", resolve));
    socket.write(pause(pausable.number, body).slice(0, -(body.length - 5)));
    const stopped = served.kill("SIGTERM");
    // The stop has begun once the port refuses new connections.
    const refused = () =>
      new Promise<boolean>((resolve) => {
        const probe = net.connect(port, "127.0.0.1", () => {
          probe.destroy();
          resolve(false);
        });
        probe.on("error", () => resolve(true));
      });
    await vi.waitFor(async () => expect(await refused()).toBe(true), { timeout: 30_000, interval: 50 });
    // The rest of the body, and a second pause pipelined behind it.
    socket.write(body.slice(5) + pause(bystander.number, JSON.stringify({ reason: "behind" })));
    await closed;
    // Found by an operator's walk: a keep-alive connection busy when the stop
    // began was served on until AGENTD_SHUTDOWN_TIMEOUT cut it, mid-request.
    // Found by the review of that fix: the pause pipelined behind was then
    // made, but never answered. Now it is not handled: the closed connection
    // tells the client to send it again.
    expect(response.match(/HTTP\/1\.1 \d{3}/g)).toEqual(["HTTP/1.1 204"]);
    expect(response).toMatch(/\r\nConnection: close\r\n/i);
    expect((await stopped).code).toBe(0);
    expect(served.logs()).not.toContain("still open at the end of AGENTD_SHUTDOWN_TIMEOUT");
    const last = served.logs().trim().split("\n").at(-1) ?? "";
    expect(JSON.parse(last)).toMatchObject({ level: 30, msg: "stopped" });

    // Restarted on the same data directory: the pause is there, no new admin token is printed.
    const again = await serve(dataDir, { AGENTD_PORT: String(port) });
    try {
      expect(again.output()).not.toContain("shown only this once");
      const agent = await again.call("GET", `/agents/by-number/${pausable.number}`, { token: adminToken });
      expect(agent.json).toMatchObject({ paused: true, paused_reason: "in flight" });
      expect((await again.call("GET", `/agents/by-number/${bystander.number}`, { token: adminToken })).json).toMatchObject({ paused: false });
    } finally {
      expect((await again.kill("SIGTERM")).code).toBe(0);
    }
  });

  it("drains on a signal sent as soon as the banner shows, and exits 1 at once on a second one, saying why on standard error and in the log", async () => {
    const own = mkdtempSync(path.join(tmpdir(), "agentd-twice-"));
    try {
      await ownDataDir(own);
      const draining = await spawnAgentd({ AGENTD_DATA_DIR: own, AGENTD_DRAIN_DELAY: "30s", AGENTD_LOG_LEVEL: "info" }, { cwd: own });
      draining.child.kill("SIGTERM");
      // At once: the stop is in place before the banner that spawnAgentd waited for.
      await vi.waitFor(() => expect(draining.logs()).toContain('"msg":"shutting down"'), { timeout: 30_000, interval: 50 });
      // Still draining (30 s): the exit below is the second signal's.
      expect(draining.alive()).toBe(true);
      const ended = await draining.kill("SIGINT");
      expect(ended.code).toBe(1);
      expect(draining.output()).toContain("agentd: SIGINT again while shutting down: exiting now, without waiting for requests in flight");
      expect(draining.logs()).toContain('"msg":"signal again while shutting down: exiting now, without waiting for requests in flight"');
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });

  it("cuts a request still in flight at the end of AGENTD_SHUTDOWN_TIMEOUT, saying so in the log, and exits 0", async () => {
    const own = mkdtempSync(path.join(tmpdir(), "agentd-cut-"));
    try {
      await ownDataDir(own);
      const stuck = await spawnAgentd({ AGENTD_DATA_DIR: own, AGENTD_SHUTDOWN_TIMEOUT: "1s", AGENTD_LOG_LEVEL: "info" }, { cwd: own });
      const url = new URL(stuck.url);
      const socket = tls.connect({ host: url.hostname, port: Number(url.port), ca: readFileSync(path.join(own, "tls/cert.pem"), "utf8"), servername: "localhost" });
      let response = "";
      socket.on("data", (chunk) => (response += chunk));
      socket.on("error", () => undefined);
      const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
      await new Promise((resolve) => socket.once("secureConnect", resolve));
      // A body that never comes: the request is in flight once the server has said 100 Continue.
      socket.write(`POST ${BASE_PATH}/agents/by-number/1001/pause HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 20\r\nExpect: 100-continue\r\n\r\n`);
      await vi.waitFor(() => expect(response).toContain("HTTP/1.1 100 Continue"), { timeout: 30_000, interval: 20 });
      // And a client that connected but never began its TLS handshake: Node's closeAllConnections() does not reach it.
      const silent = net.connect(Number(url.port), url.hostname);
      silent.on("error", () => undefined);
      await new Promise((resolve) => silent.once("connect", resolve));
      const ended = await stuck.kill("SIGTERM");
      expect(ended.code).toBe(0);
      await closed;
      expect(response).not.toMatch(/HTTP\/1\.1 [2-5]\d\d /);
      expect(stuck.logs()).toContain("still open at the end of AGENTD_SHUTDOWN_TIMEOUT");
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });

  it("stops, drained and with exit 0, on a signal sent during the start, once the start has shown the first admin token", async () => {
    const own = mkdtempSync(path.join(tmpdir(), "agentd-early-"));
    try {
      await ownDataDir(own);
      let sent = false;
      const early = await spawnAgentd(
        { AGENTD_DATA_DIR: own, AGENTD_LOG_LEVEL: "debug" },
        {
          cwd: own,
          // Logged before the database opens and the start proper begins.
          whileStarting: (output, child) => {
            if (!sent && output.includes('"msg":"server code loaded"')) {
              sent = true;
              child.kill("SIGTERM");
            }
          },
        },
      );
      expect(sent).toBe(true);
      const ended = await early.exited();
      expect(ended).toEqual({ code: 0, signal: null });
      const messages = early
        .logs()
        .trim()
        .split("\n")
        .map((line) => (JSON.parse(line) as { msg: string }).msg);
      expect(messages.indexOf("shutting down once started")).toBeGreaterThan(-1);
      expect(messages.indexOf("shutting down once started")).toBeLessThan(messages.indexOf("serving"));
      expect(messages.at(-1)).toBe("stopped");
      const token = /shown only this once: (\S+)/.exec(early.output())?.[1];
      expect(token, early.output()).toBeDefined();

      // The start was whole: the next one opens the same data directory, and the token shown works.
      const again = await serve(own);
      try {
        expect(again.output()).not.toContain("shown only this once");
        expect((await again.call("GET", "/agents", { token: token! })).status).toBe(200);
      } finally {
        expect((await again.kill("SIGTERM")).code).toBe(0);
      }
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });

  // Revoking every token is a lock-down: a start that then made and printed
  // a new agentd.# token (to a journal, say) would undo it.
  it("logs its start and the first admin token's id (never the token); once every token is revoked, a restart makes none and says how to make one", async () => {
    const firstLines = served.logs().trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(firstLines).toContainEqual(expect.objectContaining({ level: 30, msg: "serving", url: `https://127.0.0.1:${port}/1.0` }));
    expect(served.logs()).not.toContain(adminToken);
    const created = firstLines.find((line) => String(line.msg).startsWith("first admin token created"));
    expect(created).toMatchObject({ level: 30, acls: ["agentd.#"] });
    const ids = JSON.parse((await agentd(["token", "list", "--json"], dataDir)).stdout).map((t: { id: string }) => t.id) as string[];
    expect(ids).toContain(created!.tokenId);

    for (const id of ids) expect((await agentd(["token", "revoke", "--id", id], dataDir)).code).toBe(0);
    const locked = await serve(dataDir, { AGENTD_PORT: String(port) });
    try {
      expect(locked.output()).not.toContain("shown only this once");
      expect(locked.logs()).toContain("no token is left that has not expired or been revoked");
      expect((await locked.call("GET", "/agents", { token: adminToken })).status).toBe(401);
    } finally {
      expect((await locked.kill("SIGTERM")).code).toBe(0);
    }
    expect(JSON.parse((await agentd(["token", "list", "--json"], dataDir)).stdout)).toEqual([]);
  });
});

describe("the serve command's code cache", () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), "agentd-code-cache-"));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  /** A start at debug level, which logs how the server's code was loaded; stopped once it has answered and saved. */
  async function start(): Promise<string> {
    const served = await serve(dataDir, { AGENTD_LOG_LEVEL: "debug", AGENTD_ADMIN_TOKEN: ADMIN_TOKEN });
    expect((await served.call("GET", "/agents", { token: ADMIN_TOKEN })).status).toBe(200);
    const loaded = /"codeCache":"(\w+)"/.exec(served.logs())?.[1];
    // A start without a usable cache writes one once serving.
    if (loaded !== "used") await vi.waitFor(() => expect(served.logs()).toContain('"msg":"code cache written"'), { timeout: 10_000 });
    await served.kill("SIGTERM");
    return loaded ?? "(not logged)";
  }

  it("is written into the data directory by the first start and used by the next; a damaged one is replaced", async () => {
    expect(await start()).toBe("absent");
    const cacheDir = path.join(dataDir, "code-cache");
    const files = readdirSync(cacheDir);
    expect(files).toEqual([expect.stringMatching(/^serving\.cjs\.[0-9a-f]{32}\.v8$/)]);
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);

    expect(await start()).toBe("used");

    writeFileSync(path.join(cacheDir, files[0]!), Buffer.alloc(65_536, 7));
    expect(await start()).toBe("rejected");
    expect(await start()).toBe("used");
  });

  it("is not used where no bundle is built: the compiler's own output serves from the modules themselves, embedded database and all", async () => {
    // dist/server/ is tsc's output, with no serving.cjs beside its
    // load-serving.js: what a build without the bundle step leaves.
    const compiled = path.join(repoRoot, "dist", "server", "cli", "agentd.js");
    expect(existsSync(path.join(path.dirname(compiled), "serving.cjs"))).toBe(false);
    const ownDir = mkdtempSync(path.join(tmpdir(), "agentd-source-"));
    try {
      const served = await spawnAgentd(
        { AGENTD_DATA_DIR: ownDir, AGENTD_LOG_LEVEL: "debug", AGENTD_ADMIN_TOKEN: ADMIN_TOKEN },
        { cwd: ownDir, cli: compiled },
      );
      try {
        const paused = await served.call("POST", `/agents/by-number/${DEMO_AGENTS[0]!.number}/pause`, { token: ADMIN_TOKEN, body: { reason: "lunch" } });
        expect(paused.status, paused.text).toBe(204);
        const agent = await served.call("GET", `/agents/by-number/${DEMO_AGENTS[0]!.number}`, { token: ADMIN_TOKEN });
        expect(agent.json).toMatchObject({ paused: true, paused_reason: "lunch" });
        expect(/"codeCache":"(\w+)"/.exec(served.logs())?.[1]).toBe("source");
      } finally {
        await served.kill("SIGTERM");
      }
      expect(existsSync(path.join(ownDir, "code-cache"))).toBe(false);
    } finally {
      rmSync(ownDir, { recursive: true, force: true });
    }
  });
});

describe("the admin CLI without a running server", () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), "agentd-cli-"));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("warns that embedded tokens go unused while AGENTD_AUTH_URL is set: token create, and AGENTD_ADMIN_TOKEN at start", async () => {
    const own = path.join(mkdtempSync(path.join(tmpdir(), "agentd-cli-auth-")), "data");
    await ownDataDir(own);
    const external = { AGENTD_AUTH_URL: "https://auth.example.invalid:9497" };
    const warning = "agentd: warning: AGENTD_AUTH_URL is set, so the server checks every token with https://auth.example.invalid:9497 and never reads its own";
    try {
      // No server: the command's own configuration has the URL.
      const created = await agentd(["token", "create", "--acl", "agentd.#"], own, external);
      expect(created.code, created.stderr).toBe(0);
      expect(created.stderr).toContain(warning);
      const served = await spawnAgentd({ ...external, AGENTD_DATA_DIR: own, AGENTD_ADMIN_TOKEN: ADMIN_TOKEN }, { cwd: own });
      try {
        expect(served.logs()).toContain("AGENTD_ADMIN_TOKEN is stored but not used while AGENTD_AUTH_URL is set");
        // Through the running server, whose configuration decides, though this shell lacks the URL.
        const throughServer = await agentd(["token", "create", "--acl", "agentd.#"], own);
        expect(throughServer.code, throughServer.stderr).toBe(0);
        expect(throughServer.stderr).toContain(warning);
        const withoutUrl = mkdtempSync(path.join(tmpdir(), "agentd-cli-noauth-"));
        try {
          const embedded = await agentd(["token", "create", "--acl", "agentd.#"], withoutUrl);
          expect(embedded.stderr).not.toContain("AGENTD_AUTH_URL is set");
        } finally {
          rmSync(withoutUrl, { recursive: true, force: true });
        }
      } finally {
        await served.kill("SIGTERM");
      }
    } finally {
      rmSync(path.dirname(own), { recursive: true, force: true });
    }
  });

  it("warns of an AGENTD_* variable it does not read, from the environment or .env, and carries on", async () => {
    const fresh = mkdtempSync(path.join(tmpdir(), "agentd-cli-typo-"));
    try {
      writeFileSync(path.join(fresh, ".env"), "AGENTD_DRAIN_DELY=1s\n");
      const typo = await agentd(["token", "create", "--acl", "agentd.#"], fresh, { AGENTD_PROT: "9999", AGENTD_URL: "https://localhost:9493/1.0" });
      expect(typo.code, typo.stderr).toBe(0);
      const warned = typo.stderr.split("\n").filter((line) => line.includes("is not a variable agentd reads"));
      expect(warned).toEqual([
        "agentd: AGENTD_DRAIN_DELY is not a variable agentd reads: ignored (the README's Configuration lists them)",
        "agentd: AGENTD_PROT is not a variable agentd reads: ignored (the README's Configuration lists them)",
      ]);
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  });

  it("says so when it creates a new embedded database (a command run from the wrong directory), and only then; a command with nothing to find in a new one is refused and makes none", async () => {
    const fresh = mkdtempSync(path.join(tmpdir(), "agentd-cli-fresh-"));
    try {
      const missing = path.join(fresh, "no-such-folder");
      for (const args of [["token", "list"], ["events", "list"], ["token", "revoke", "--id", "0123456789ab"], ["events", "drop", "--sink", "bus", "--force"]]) {
        for (const dataDir of [fresh, missing]) {
          const refused = await runAgentd(args, { AGENTD_DATA_DIR: dataDir }, { cwd: fresh });
          expect(refused.code, `${args.join(" ")}: ${refused.stderr}`).toBe(1);
          expect(refused.stderr).toContain(`agentd: no embedded database in ${path.resolve(dataDir)}: run the command where the server runs`);
        }
      }
      expect(existsSync(missing)).toBe(false);
      expect(readdirSync(fresh)).toEqual([]);
      const first = await agentd(["token", "create", "--acl", "agentd.#"], fresh);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stderr).toContain(`agentd: no embedded database in ${path.resolve(fresh)} yet: creating a new one`);
      expect(first.stderr).toContain("AGENTD_DATABASE_URL is set neither in the environment nor in");
      const second = await agentd(["token", "list"], fresh);
      expect(second.code, second.stderr).toBe(0);
      expect(second.stderr).not.toContain("no embedded database");
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  });

  it("import --replace makes the file the whole fleet, the demo agents of a new database included, by itself and through the running server; an empty file is refused", async () => {
    const fresh = mkdtempSync(path.join(tmpdir(), "agentd-cli-replace-"));
    const agent = (id: number, number: string) => ({ id, number, extension: number, context: "default", logged: true, paused: false, paused_reason: null, state_interface: "SIP/x" });
    const file = (name: string, agents: unknown[]) => {
      const at = path.join(fresh, name);
      writeFileSync(at, JSON.stringify(agents));
      return at;
    };
    try {
      // Number 1001 is a demo agent's (id 1) until the file gives it to agent 70.
      const first = await agentd(["import", "--replace", file("fleet.json", [agent(70, "1001"), agent(71, "7071")])], fresh);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stderr).toContain(`imported 2 agents, removed ${DEMO_AGENTS.length} the file does not name`);
      const served = await spawnAgentd({ AGENTD_DATA_DIR: fresh }, { cwd: fresh });
      try {
        const token = /shown only this once: (\S+)/.exec(served.output())?.[1];
        expect(token, served.output()).toBeDefined();
        const ids = async () => ((await served.call("GET", "/agents", { token })).json as { id: number }[]).map((a) => a.id);
        expect(await ids()).toEqual([70, 71]);
        const empty = await agentd(["import", "--replace", file("empty.json", [])], fresh);
        expect(empty.code).toBe(1);
        expect(empty.stderr).toContain("the file names no agent");
        expect(await ids()).toEqual([70, 71]);
        const second = await agentd(["import", "--replace", file("next.json", [agent(71, "7071"), agent(72, "7072")])], fresh);
        expect(second.code, second.stderr).toBe(0);
        expect(second.stderr).toContain("imported 2 agents, removed 1 the file does not name");
        expect(await ids()).toEqual([71, 72]);
        await vi.waitFor(() => expect(served.output()).toContain("agents removed by an import"));
      } finally {
        await served.kill("SIGTERM");
      }
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  });

  it("opens the embedded database itself, seeding a brand-new one with the demo agents, and the server started afterwards sees its work", async () => {
    const inDataDir = (args: string[]) => agentd(args, dataDir);
    const { token } = await createToken(inDataDir, ["--acl", "agentd.#"]);
    const file = path.join(dataDir, "agents.json");
    writeFileSync(
      file,
      JSON.stringify([{ id: 70, number: "7070", extension: "7070", context: "default", logged: true, paused: false, paused_reason: null, state_interface: "SIP/x" }]),
    );
    const imported = await agentd(["import", file], dataDir);
    expect(imported.code, imported.stderr).toBe(0);

    // Tokens listed and revoked with no server: by standard input and by id.
    const tokens = await Promise.all(["a", "b", "c"].map(() => createToken(inDataDir, ["--acl", "agentd.agents.read"])));
    const [kept, byStdin, byId] = tokens;
    await expectListed(dataDir, { id: byId!.id, acls: ["agentd.agents.read"], expires: false }, [token, ...tokens.map((t) => t.token)]);
    expect((await agentd(["token", "revoke"], dataDir, {}, byStdin!.token + "\n")).code).toBe(0);
    expect((await agentd(["token", "revoke", "--id", byId!.id], dataDir)).code).toBe(0);
    const left = JSON.parse((await agentd(["token", "list", "--json"], dataDir)).stdout).map((t: { id: string }) => t.id);
    expect(left).toContain(kept!.id);
    expect(left).not.toContain(byStdin!.id);
    expect(left).not.toContain(byId!.id);

    const served = await serve(dataDir);
    try {
      expect((await served.call("GET", "/agents", { token: kept!.token })).status).toBe(200);
      expect((await served.call("GET", "/agents", { token: byStdin!.token })).status).toBe(401);
      expect((await served.call("GET", "/agents", { token: byId!.token })).status).toBe(401);
      // A token already exists, so no admin token is made or printed.
      expect(served.output()).not.toContain("shown only this once");
      const answer = await served.call("GET", "/agents/by-number/7070", { token });
      expect(answer.status).toBe(200);
      expect(answer.json.id).toBe(70);
      // The first command created the database, so it holds the demo agents too (and the server seeded nothing more).
      const all = await served.call("GET", "/agents", { token });
      expect(all.json.map(({ origin_uuid: _, ...agent }: { origin_uuid: string }) => agent)).toEqual([
        ...DEMO_AGENTS,
        { id: 70, number: "7070", extension: "7070", context: "default", logged: true, paused: false, paused_reason: null, state_interface: "SIP/x" },
      ]);
    } finally {
      await served.kill("SIGTERM");
    }
  });

  it("rejects usage errors with exit code 2", async () => {
    const missingAcl = await agentd(["token", "create"], dataDir);
    expect(missingAcl.code).toBe(2);
    const badTtl = await agentd(["token", "create", "--acl", "agentd.#", "--ttl", "soon"], dataDir);
    expect(badTtl.code).toBe(2);
    expect(badTtl.stderr).toContain("duration");
    const unknown = await agentd(["frobnicate"], dataDir);
    expect(unknown.code).toBe(2);
    // Past what a token's expiry can hold: a usage error, not "Invalid time value".
    const hugeTtl = await agentd(["token", "create", "--acl", "agentd.#", "--ttl", "99999999999999999999"], dataDir);
    expect([hugeTtl.code, hugeTtl.stderr]).toEqual([2, expect.stringContaining("from 1s to 100 years")]);
    // ACLs that would never match, or forge rows in `token list`, are refused, and nothing is created.
    const before = await agentd(["token", "list", "--json"], dataDir);
    for (const acl of ["", "agentd..agents", ".agentd", "agentd.agents read", "agentd.#\nFORGED  never  agentd.#"]) {
      const refused = await agentd(["token", "create", "--acl", acl], dataDir);
      expect(refused.code, JSON.stringify(acl)).toBe(2);
      expect(refused.stderr).toContain(`ACL ${JSON.stringify(acl)}`);
    }
    expect((await agentd(["token", "list", "--json"], dataDir)).stdout).toBe(before.stdout);
  });
});

describe("an operator's certificate out of its validity period", () => {
  it("still starts, and says so in its banner and its log", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "agentd-expired-"));
    try {
      const day = 24 * 3600 * 1000;
      const pems = await generate([{ name: "commonName", value: "localhost" }], {
        algorithm: "sha256",
        keySize: 2048,
        notBeforeDate: new Date(Date.now() - 400 * day),
        notAfterDate: new Date(Date.now() - 35 * day),
      });
      writeFileSync(path.join(dir, "cert.pem"), pems.cert);
      writeFileSync(path.join(dir, "key.pem"), pems.private, { mode: 0o600 });
      const served = await serve(dir, { AGENTD_TLS_CERT: path.join(dir, "cert.pem"), AGENTD_TLS_KEY: path.join(dir, "key.pem"), AGENTD_LOG_LEVEL: "warn" });
      try {
        const expired = new Date(new X509Certificate(pems.cert).validTo).toISOString();
        expect(served.output()).toContain(`Warning: the certificate expired on ${expired}: clients refuse every connection. Replace it (and its key) and restart`);
        expect(served.logs()).toContain(`"msg":"the certificate expired on ${expired}: clients refuse every connection.`);
      } finally {
        await served.kill("SIGTERM");
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("start-up failures name the path and the system's reason, and exit 1", () => {
  let tmp: string;
  beforeAll(() => {
    tmp = mkdtempSync(path.join(tmpdir(), "agentd-unusable-"));
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  /** `agentd serve`, and an admin command, on `dataDir`: both fail with exit code 1 and `message` as a line of their own. */
  async function expectRefused(dataDir: string, message: string): Promise<void> {
    for (const args of [["serve"], ["token", "create", "--acl", "agentd.#"]]) {
      const result = await runAgentd(args, { AGENTD_DATA_DIR: dataDir, AGENTD_PORT: "0", AGENTD_OPS_PORT: "0" }, { cwd: tmp, timeoutMs: 30_000 });
      expect(result.stderr.split("\n"), args.join(" ")).toContain(message);
      expect(result.stderr).not.toContain("[object Object]");
      expect(result.stderr).not.toContain("agentd is serving");
      expect(result.code, args.join(" ")).toBe(1);
    }
  }

  it("a certificate file that cannot be read: the variable and the path are named", async () => {
    const dataDir = path.join(tmp, "tls");
    await ownDataDir(dataDir);
    const missing = path.join(tmp, "no-such.pem");
    const result = await runAgentd(
      ["serve"],
      { AGENTD_DATA_DIR: dataDir, AGENTD_PORT: "0", AGENTD_OPS_PORT: "0", AGENTD_TLS_CERT: missing, AGENTD_TLS_KEY: missing },
      { cwd: tmp, timeoutMs: 30_000 },
    );
    expect(result.stderr.split("\n")).toContain(`agentd: AGENTD_TLS_CERT: cannot read ${missing} (ENOENT)`);
    expect(result.code).toBe(1);
  });

  it("a port already in use, or an unknown host: the listener and its variables are named", async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as AddressInfo).port;
    // One data directory, from the suite's template (no initdb): each start fails and lets it go.
    const dataDir = path.join(tmp, "listen");
    await ownDataDir(dataDir);
    try {
      const cases: [Record<string, string>, string][] = [
        [{ AGENTD_PORT: String(port), AGENTD_OPS_PORT: "0" }, `agentd: cannot listen on 127.0.0.1:${port} (AGENTD_HOST, AGENTD_PORT): EADDRINUSE: address already in use`],
        [{ AGENTD_PORT: "0", AGENTD_OPS_PORT: String(port) }, `agentd: cannot listen on 127.0.0.1:${port} (AGENTD_OPS_HOST, AGENTD_OPS_PORT): EADDRINUSE: address already in use`],
      ];
      for (const [env, message] of cases) {
        const result = await runAgentd(["serve"], { AGENTD_DATA_DIR: dataDir, AGENTD_HOST: "127.0.0.1", AGENTD_OPS_HOST: "127.0.0.1", ...env }, { cwd: tmp, timeoutMs: 30_000 });
        expect(result.stderr.split("\n"), JSON.stringify(env)).toContain(message);
        expect(result.code).toBe(1);
      }
      const unknown = await runAgentd(["serve"], { AGENTD_DATA_DIR: dataDir, AGENTD_HOST: "no-such-host.invalid", AGENTD_PORT: "0", AGENTD_OPS_PORT: "0" }, { cwd: tmp, timeoutMs: 30_000 });
      // ENOTFOUND, or EAI_AGAIN where no name server answers.
      expect(unknown.stderr).toMatch(/^agentd: cannot listen on no-such-host\.invalid:0 \(AGENTD_HOST, AGENTD_PORT\): .*(ENOTFOUND|EAI_AGAIN)/m);
      expect(unknown.code).toBe(1);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it("a regular file where the data directory should be, or above it", async () => {
    const file = path.join(tmp, "a-file");
    writeFileSync(file, "not a directory\n");
    await expectRefused(file, `agentd: cannot open the data directory ${file}: ENOTDIR: not a directory`);
    await expectRefused(path.join(file, "data"), `agentd: cannot open the data directory ${path.join(file, "data")}: ENOTDIR: not a directory`);
  });

  // Found by an operator: on PostgreSQL, where the data directory holds only
  // the generated certificate, a bare "EACCES: … mkdir" named neither.
  it("on PostgreSQL, a data directory where the generated certificate cannot be made: the certificate, the variables and the system's reason", async () => {
    const file = path.join(tmp, "a-file-not-a-folder");
    writeFileSync(file, "not a directory\n");
    const dataDir = path.join(file, "data");
    const result = await runAgentd(
      ["serve"],
      { AGENTD_DATABASE_URL: `postgres://agentd@127.0.0.1:${await freePort()}/agentd`, AGENTD_DATA_DIR: dataDir, AGENTD_PORT: "0", AGENTD_OPS_PORT: "0" },
      { cwd: tmp, timeoutMs: 30_000 },
    );
    expect(result.stderr.split("\n")).toContain(
      `agentd: cannot read or create the self-signed certificate in ${path.join(dataDir, "tls")} (AGENTD_DATA_DIR; or set AGENTD_TLS_CERT and AGENTD_TLS_KEY): ENOTDIR: not a directory (${path.join(dataDir, "tls", "cert.pem")})`,
    );
    expect(result.code).toBe(1);
  });

  it("a regular file where its run/ folder should be", async () => {
    const dataDir = path.join(tmp, "run-is-a-file");
    mkdirSync(dataDir, { mode: 0o700 });
    writeFileSync(path.join(dataDir, "run"), "not a directory\n");
    await expectRefused(dataDir, `agentd: cannot open the data directory ${dataDir}: ENOTDIR: not a directory (${path.join(dataDir, "run")})`);
  });

  it("a database that refuses the connection while an auth service is configured: said in one line, not a crash", async () => {
    // The server loads the auth service's client while the database opens:
    // a database that fails first must still be said the usual way.
    const closed = await freePort();
    const result = await runAgentd(
      ["serve"],
      { AGENTD_DATABASE_URL: `postgres://agentd@127.0.0.1:${closed}/agentd`, AGENTD_AUTH_URL: "https://auth.invalid:9497", AGENTD_PORT: "0", AGENTD_OPS_PORT: "0" },
      { cwd: tmp, timeoutMs: 30_000 },
    );
    expect(result.stderr.split("\n")).toContain(
      `agentd: cannot connect to the database postgres://agentd@127.0.0.1:${closed}/agentd (AGENTD_DATABASE_URL): database unavailable: connect ECONNREFUSED 127.0.0.1:${closed}`,
    );
    expect(result.stderr).not.toMatch(/^\s+at /m);
    expect(result.code).toBe(1);
  });

  // Found by an operator: AGENTD_DB_TIMEOUT=5 (read as 5 ms) was blamed on the database alone.
  it("a database that does not answer within AGENTD_DB_TIMEOUT: the time-out's variable named beside the database's", async () => {
    const proxy = await startTcpProxy({ port: 5432 });
    try {
      await proxy.cut("blackhole");
      const result = await runAgentd(
        ["serve"],
        { AGENTD_DATABASE_URL: `postgres://agentd@127.0.0.1:${proxy.port}/agentd`, AGENTD_DB_TIMEOUT: "300ms", AGENTD_PORT: "0", AGENTD_OPS_PORT: "0" },
        { cwd: tmp, timeoutMs: 30_000 },
      );
      expect(result.stderr).toMatch(
        new RegExp(`^agentd: cannot connect to the database postgres://agentd@127\\.0\\.0\\.1:${proxy.port}/agentd \\(AGENTD_DATABASE_URL\\) within 300 ms \\(AGENTD_DB_TIMEOUT\\): database unavailable: .*time`, "m"),
      );
      expect(result.code).toBe(1);
    } finally {
      await proxy.close();
    }
  });

  // Found by an operator: "permission denied for schema public" named neither the step nor the variable.
  it.runIf(postgresTestUrl() !== undefined)("a PostgreSQL role that may not create the schema: the step and the variable named, the password not", async () => {
    const database = await freshPostgres();
    const db = await database.open();
    const role = `agentd_dml_${Date.now()}`;
    try {
      await db.query(`CREATE ROLE ${role} LOGIN PASSWORD 'hunter2'`);
      await db.query("REVOKE CREATE ON SCHEMA public FROM PUBLIC");
      const url = new URL(database.location);
      url.username = role;
      url.password = "hunter2";
      // pg reads a password in the query too.
      url.search = "?password=hunter3";
      const result = await runAgentd(["serve"], { AGENTD_DATABASE_URL: url.href, AGENTD_PORT: "0", AGENTD_OPS_PORT: "0" }, { cwd: tmp, timeoutMs: 30_000 });
      url.password = "***";
      url.search = "";
      expect(result.stderr.split("\n")).toContain(
        `agentd: cannot migrate the database ${url.href}?… (AGENTD_DATABASE_URL): permission denied for schema public: a new database's schema is made by a role that may create tables in it (its owner can)`,
      );
      expect(result.stderr).not.toMatch(/hunter[23]/);
      expect(result.code).toBe(1);
    } finally {
      await db.query(`DROP ROLE IF EXISTS ${role}`);
      await db.close();
      await database.cleanup();
    }
  });

  // Found by an operator's walk: a role missing the grants, or one granted
  // what it serves on a schema a migration behind, was told "permission
  // denied for schema public", pointing at CREATE, which it did not need.
  it.runIf(postgresTestUrl() !== undefined)("a PostgreSQL role without the grants, or granted on a schema a migration behind, is told what it lacks", async () => {
    const database = await freshPostgres();
    const owner = await database.open();
    const role = `agentd_rw_${Date.now()}`;
    try {
      await migrate(owner, MIGRATIONS.slice(0, -1));
      await owner.query(`CREATE ROLE ${role} LOGIN`);
      const url = new URL(database.location);
      url.username = role;
      const asRole = async (): Promise<string> => {
        const db = await openPostgres(url.href, { timeoutMs: 5_000 });
        try {
          await migrate(db);
          return "migrated";
        } catch (err) {
          return (err as Error).message;
        } finally {
          await db.close();
        }
      };
      expect(await asRole()).toBe("permission denied for table schema_migrations: the role needs the README's grants (PostgreSQL) on the tables it serves");
      await owner.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`);
      await owner.query(`GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO ${role}`);
      // PostgreSQL's own words first ("must be owner of table …"), then what to do.
      expect(await asRole()).toMatch(
        new RegExp(`^[^:]+: migration ${MIGRATIONS.length} of this agentd needs the rights of the role that owns the schema: start it once with that role, then give the grants again$`),
      );
      // Once the owner has migrated, the granted role serves.
      await migrate(owner);
      expect(await asRole()).toBe("migrated");
    } finally {
      await owner.query(`DROP OWNED BY ${role}`).catch(() => undefined);
      await owner.query(`DROP ROLE IF EXISTS ${role}`);
      await owner.close();
      await database.cleanup();
    }
  });

  // Found by review: looking schema_migrations up on the whole search_path
  // took another application's, in a later schema, for agentd's record.
  it.runIf(postgresTestUrl() !== undefined)("a schema of its own on the search_path: another application's schema_migrations in a later one is left alone", async () => {
    const database = await freshPostgres();
    const owner = await database.open();
    try {
      await owner.query("CREATE SCHEMA agentd");
      // As many versions as agentd's, so the table looks up to date when taken for agentd's.
      await owner.query("CREATE TABLE public.schema_migrations (version integer PRIMARY KEY)");
      await owner.query("INSERT INTO public.schema_migrations SELECT generate_series(1, $1::int)", [MIGRATIONS.length]);
      const url = new URL(database.location);
      url.searchParams.set("options", "-c search_path=agentd,public");
      const db = await openPostgres(url.href, { timeoutMs: 5_000 });
      try {
        expect(await migrate(db)).toEqual(MIGRATIONS.map((_, index) => index + 1));
        expect(await migrate(db)).toEqual([]);
      } finally {
        await db.close();
      }
      const tables = await owner.query<{ schema: string }>("SELECT table_schema AS schema FROM information_schema.tables WHERE table_name = 'agents'");
      expect(tables).toEqual([{ schema: "agentd" }]);
      expect(await owner.query("SELECT count(*)::int AS versions FROM public.schema_migrations")).toEqual([{ versions: MIGRATIONS.length }]);
    } finally {
      await owner.close();
      await database.cleanup();
    }
  });

  // Found by an operator: a role granted only the tables served, then
  // answered 500 to every pause that records an event (its outbox row is
  // numbered by a sequence). The README's grants, exactly, given before an
  // upgrade whose migration (10) adds a table they do not cover.
  it.runIf(postgresTestUrl() !== undefined)("a PostgreSQL role with the README's grants serves once the owner has migrated, an upgrade's new table included: its first admin token, reads, a pause that records an event", async () => {
    const database = await freshPostgres();
    const owner = await database.open();
    const role = `agentd_rw_${Date.now()}`;
    try {
      await migrate(owner, MIGRATIONS.slice(0, 9));
      await owner.query(`INSERT INTO agents (id, number, extension, context, logged, paused, paused_reason, state_interface) VALUES (1, '1001', '1001', 'default', true, false, NULL, 'SIP/a')`);
      await owner.query(`CREATE ROLE ${role} LOGIN PASSWORD 'rw'`);
      await owner.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`);
      await owner.query(`GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO ${role}`);
      await migrate(owner);
      const url = new URL(database.location);
      url.username = role;
      url.password = "rw";
      const served = await spawnAgentd(
        { AGENTD_DATABASE_URL: url.href, AGENTD_WEBHOOK_URLS: `http://127.0.0.1:${await freePort()}/hooks`, AGENTD_WEBHOOK_SECRET: `whsec_${Buffer.alloc(32, 7).toString("base64")}` },
        { cwd: tmp },
      );
      try {
        const token = /shown only this once: (\S+)/.exec(served.output())?.[1];
        expect(token, served.output()).toBeDefined();
        expect((await served.call("GET", "/agents/by-number/1001", { token })).status).toBe(200);
        const paused = await served.call("POST", "/agents/by-number/1001/pause", { token, body: { reason: "granted" } });
        expect(paused.status, paused.text).toBe(204);
        expect(await owner.query("SELECT 1 FROM event_outbox")).toHaveLength(1);
        expect(await owner.query("SELECT 1 FROM token_history")).toHaveLength(1);
      } finally {
        await served.kill("SIGTERM");
      }
    } finally {
      await owner.query(`DROP OWNED BY ${role}`);
      await owner.query(`DROP ROLE IF EXISTS ${role}`);
      await owner.close();
      await database.cleanup();
    }
  });

  // A rolling upgrade: the previous release's instances still run on the
  // shared database. An admin command of the new release must not upgrade
  // the schema under them (they could not start again); the new release's
  // server does, and says so.
  it.runIf(postgresTestUrl() !== undefined)("an admin command refuses an older PostgreSQL schema and leaves it as it was; the server, or an import run before it, upgrades it and says so", async () => {
    const database = await freshPostgres();
    const owner = await database.open();
    const imported = await freshPostgres();
    const ownerOfImported = await imported.open();
    try {
      await migrate(owner, MIGRATIONS.slice(0, -1));
      const env = { AGENTD_DATABASE_URL: database.location };
      const refused = await agentd(["token", "list"], tmp, env);
      expect(refused.code, refused.stderr).toBe(1);
      expect(refused.stderr).toContain(`database schema version ${MIGRATIONS.length - 1} is older than this agentd (${MIGRATIONS.length}); only \`agentd serve\` and \`agentd import\` upgrade it`);
      // Said as a refusal, not as a failure to migrate.
      expect(refused.stderr).not.toContain("cannot migrate");
      const newest = async () => (await owner.query<{ newest: number }>("SELECT max(version) AS newest FROM schema_migrations"))[0]?.newest;
      expect(await newest()).toBe(MIGRATIONS.length - 1);
      const served = await spawnAgentd({ ...env, AGENTD_LOG_LEVEL: "info" }, { cwd: tmp });
      try {
        expect(served.output()).toContain(`database schema migrated to version ${MIGRATIONS.length}`);
      } finally {
        await served.kill("SIGTERM");
      }
      expect(await newest()).toBe(MIGRATIONS.length);
      const listed = await agentd(["token", "list"], tmp, env);
      expect(listed.code, listed.stderr).toBe(0);

      // A start script's `agentd import … && agentd serve`, after an upgrade: the import upgrades.
      await migrate(ownerOfImported, MIGRATIONS.slice(0, -1));
      const file = path.join(tmp, "upgrade-agents.json");
      writeFileSync(file, JSON.stringify([{ id: 80, number: "8080", extension: "8080", context: "default", logged: true, paused: false, paused_reason: null, state_interface: "SIP/x" }]));
      const importing = await agentd(["import", file], tmp, { AGENTD_DATABASE_URL: imported.location });
      expect(importing.code, importing.stderr).toBe(0);
      expect(importing.stderr).toContain(`database schema migrated to version ${MIGRATIONS.length}`);
      const [row] = await ownerOfImported.query<{ newest: number }>("SELECT max(version) AS newest FROM schema_migrations");
      expect(row?.newest).toBe(MIGRATIONS.length);
    } finally {
      await owner.close();
      await database.cleanup();
      await ownerOfImported.close();
      await imported.cleanup();
    }
  });

  it("unusable files in the embedded database, which PGlite reports as a bare errno object", async () => {
    const dataDir = path.join(tmp, "broken-pgdata");
    await ownDataDir(dataDir);
    const conf = path.join(dataDir, "pgdata", "postgresql.conf");
    rmSync(conf);
    mkdirSync(conf);
    await expectRefused(dataDir, `agentd: cannot open the embedded database in ${path.join(dataDir, "pgdata")}: EISDIR: illegal operation on a directory`);
  });

  // Found by a disaster walk: PGlite said "Aborted(). Build with -sASSERTIONS for more info."
  it("a damaged file of the embedded database: said in an operator's words, with what to do", async () => {
    const dataDir = path.join(tmp, "damaged-pgdata");
    await ownDataDir(dataDir);
    truncateSync(path.join(dataDir, "pgdata", "global", "pg_control"), 100);
    await expectRefused(
      dataDir,
      `agentd: cannot open the embedded database in ${path.join(dataDir, "pgdata")}: PostgreSQL could not start on its files: one of them is damaged or missing, or the disk is full. Check the free space (df), then restore the data directory from a backup`,
    );
  });
});

describe("command line", () => {
  it("names a mistyped command as unknown (exit 2), and lists the commands", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "agentd-cli-"));
    try {
      const result = await agentd(["sevre"], dataDir);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("error: unknown command 'sevre'");
      expect(result.stderr).toMatch(/^ {2}serve\b/m);
      expect(result.stderr).not.toContain("AGENTD_PORT");
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("configuration errors", () => {
  it.each([
    ["AGENTD_PORT", "abc"],
    ["AGENTD_DATABASE_URL", "mysql://db/agents"],
    ["AGENTD_RATE_LIMIT", "-5"],
    ["AGENTD_AUTH_TIMEOUT", "soon"],
    ["AGENTD_TLS_CERT", "/etc/only-one-of-the-pair.pem"],
  ])("exits 2 before listening when %s=%j, naming the variable", async (name, value) => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "agentd-cfg-"));
    try {
      const port = await freePort();
      const result = await agentd(["serve"], dataDir, { AGENTD_PORT: String(port), [name]: value });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(name);
      expect(result.stderr).not.toContain("agentd is serving");
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(pgUrl === undefined)("token commands on PostgreSQL", () => {
  let db: TestDatabase;
  let server: TestServer;
  let cwd: string;
  const cli = (args: string[], input?: string) =>
    runAgentd(args, { AGENTD_DATABASE_URL: db.location }, { cwd, ...(input === undefined ? {} : { input }) });

  beforeAll(async () => {
    cwd = mkdtempSync(path.join(tmpdir(), "agentd-pg-cli-"));
    db = await freshPostgres();
    server = await startTestServer({ AGENTD_DATABASE_URL: db.location });
  });
  afterAll(async () => {
    await server?.close();
    await db?.cleanup();
    rmSync(cwd, { recursive: true, force: true });
  });

  it("create, list, revoke by standard input and by id: the revoked tokens stop working at once", async () => {
    const [one, two] = await Promise.all([createToken(cli, ["--acl", "agentd.#", "--ttl", "2h"]), createToken(cli, ["--acl", "agentd.agents.read"])]);
    for (const { token } of [one, two]) expect((await server.call("GET", "/agents", { token })).status).toBe(200);

    const listed = await cli(["token", "list", "--json"]);
    expect(listed.code, listed.stderr).toBe(0);
    const tokens = JSON.parse(listed.stdout);
    expect(tokens.find((t: { id: string }) => t.id === one.id)).toMatchObject({ acls: ["agentd.#"], expiresAt: expect.stringMatching(/^\d{4}-/) });
    expect(tokens.find((t: { id: string }) => t.id === two.id)).toMatchObject({ acls: ["agentd.agents.read"], expiresAt: null });
    // AGENTD_ADMIN_TOKEN is there too, with an id of its own.
    expect(tokens).toHaveLength(3);
    for (const secret of [one.token, two.token, ADMIN_TOKEN]) expect(listed.stdout).not.toContain(secret);

    expect((await cli(["token", "revoke", "-"], one.token)).code).toBe(0);
    expect((await server.call("GET", "/agents", { token: one.token })).status).toBe(401);
    expect((await cli(["token", "revoke", "--id", two.id])).code).toBe(0);
    expect((await server.call("GET", "/agents", { token: two.token })).status).toBe(401);
    expect((await server.call("GET", "/agents")).status).toBe(200);
  });
});
