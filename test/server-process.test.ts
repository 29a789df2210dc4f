// `agentd` as an operator runs it: real child processes on a real data
// directory, talking HTTPS, with the admin CLI beside them.
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import tls from "node:tls";
import { Agent } from "undici";
import { BASE_PATH } from "../server/contract.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminSocketPath } from "../server/admin/channel.js";
import { DEMO_AGENTS } from "../server/store/seed.js";
import { SUITE_AGENTS, suiteAgents } from "./helpers/agents.js";
import { ownDataDir } from "./helpers/data-dir.js";
import { callHttps } from "./helpers/https.js";
import { freePort } from "../devkit/ports.js";
import { runAgentd, spawnAgentd, type AgentdProcess } from "./helpers/process.js";

/** `agentd <args>` with this data directory, run to completion. */
function agentd(args: string[], dataDir: string, env: Record<string, string> = {}) {
  return runAgentd(args, { AGENTD_DATA_DIR: dataDir, ...env }, { cwd: dataDir });
}

/** `agentd serve` on this data directory, with JSON logs at the default level. */
function serve(dataDir: string, env: Record<string, string> = {}): Promise<AgentdProcess> {
  return spawnAgentd({ AGENTD_DATA_DIR: dataDir, AGENTD_LOG_LEVEL: "info", ...env }, { cwd: dataDir });
}

// The suite's own agents, put in the data directory before the first start
// (no demo seed); the demo seed itself is checked by the admin CLI's test below.
const { pausable } = SUITE_AGENTS;

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

  it("creates and revokes tokens through the running server", async () => {
    const created = await agentd(["token", "create", "--acl", "agentd.agents.read", "--ttl", "1h"], dataDir);
    expect(created.code, created.stderr).toBe(0);
    const token = created.stdout.trim();
    expect((await served.call("GET", "/agents", { token })).status).toBe(200);
    expect((await served.call("GET", `/agents/by-id/${pausable.id}`, { token })).status).toBe(403);

    const revoked = await agentd(["token", "revoke", token], dataDir);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect((await served.call("GET", "/agents", { token })).status).toBe(401);

    const again = await agentd(["token", "revoke", token], dataDir);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("no such token");
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
    let stopped: ReturnType<AgentdProcess["kill"]> | undefined;
    const answered = new Promise<number>((resolve, reject) => {
      const socket = tls.connect({ host: "127.0.0.1", port, ca, servername: "localhost" }, () => {
        socket.write(
          `POST ${BASE_PATH}/agents/by-number/${pausable.number}/pause HTTP/1.1\r\nHost: localhost\r\nX-Auth-Token: ${adminToken}\r\n` +
            `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n` +
            body.slice(0, 5),
        );
        setTimeout(() => {
          stopped = served.kill("SIGTERM");
          setTimeout(() => socket.write(body.slice(5)), 500);
        }, 300);
      });
      let response = "";
      socket.on("data", (chunk) => (response += chunk));
      socket.on("end", () => resolve(Number(/^HTTP\/1\.1 (\d+)/.exec(response)?.[1])));
      socket.on("close", () => resolve(Number(/^HTTP\/1\.1 (\d+)/.exec(response)?.[1])));
      socket.on("error", reject);
    });
    expect(await answered).toBe(204);
    expect((await stopped)?.code).toBe(0);

    // Restarted on the same data directory: the pause is there, no new admin token is printed.
    const again = await serve(dataDir, { AGENTD_PORT: String(port) });
    try {
      expect(again.output()).not.toContain("shown only this once");
      const agent = await again.call("GET", `/agents/by-number/${pausable.number}`, { token: adminToken });
      expect(agent.json).toMatchObject({ paused: true, paused_reason: "in flight" });
    } finally {
      expect((await again.kill("SIGTERM")).code).toBe(0);
    }
  });
});

describe("the admin CLI without a running server", () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), "agentd-cli-"));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("opens the embedded database itself, seeding a brand-new one with the demo agents, and the server started afterwards sees its work", async () => {
    const created = await agentd(["token", "create", "--acl", "agentd.#"], dataDir);
    expect(created.code, created.stderr).toBe(0);
    const token = created.stdout.trim();
    const file = path.join(dataDir, "agents.json");
    writeFileSync(
      file,
      JSON.stringify([{ id: 70, number: "7070", extension: "7070", context: "default", logged: true, paused: false, paused_reason: null, state_interface: "SIP/x" }]),
    );
    const imported = await agentd(["import", file], dataDir);
    expect(imported.code, imported.stderr).toBe(0);

    const served = await serve(dataDir);
    try {
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
