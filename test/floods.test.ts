// Floods of silent connections must not take the service down, through real
// parts: a server limited to FILE_LIMIT open files, flooded with more
// connections than that, which never start a TLS handshake, or finish it
// and then send nothing. The connection cap (AGENTD_MAX_CONNECTIONS'
// default) keeps descriptors free for the database and the relay
// throughout, the handshake and idle time-outs close the flood's
// connections, and then a real client gets its 200 and a pause commits and
// is delivered. It runs alone (vitest.config.ts): it counts the process's
// open files. Made-up tokens are in test/rate-budget.test.ts; the keep-alive
// time-out in test/connections.test.ts.
import { readdirSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import https from "node:https";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RESERVED_FILES } from "../server/http/connection-limits.js";
import { SUITE_AGENTS } from "./helpers/agents.js";
import { ownDataDir } from "./helpers/data-dir.js";
import { spawnAgentd, type AgentdProcess } from "./helpers/process.js";
import { startWebhookReceiver, type WebhookReceiver } from "./helpers/webhook-receiver.js";

/** What the real client reads and pauses. */
const AGENT = SUITE_AGENTS.pausable;

// Long enough for a flood to be opened and seen before the bound, short
// enough to keep the test quick; every wait below is that bound plus SLACK_MS.
const HANDSHAKE_BOUND_MS = 4_000;
const IDLE_BOUND_MS = 3_000;
const SLACK_MS = 10_000;
const FILE_LIMIT = 512;
/** The connection cap the server derives from FILE_LIMIT (AGENTD_MAX_CONNECTIONS' default). */
const CAP = FILE_LIMIT - RESERVED_FILES;
const WEBHOOK_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/** One GET on a fresh connection, trusting the server's certificate; the status, or the error's code. */
function tryOnce(agentd: AgentdProcess, ca: string, token: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = https.request(`${agentd.url}/agents/by-number/${AGENT.number}`, {
      ca,
      agent: false,
      headers: { "x-auth-token": token },
      timeout: 2_000,
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("timeout", () => req.destroy(Object.assign(new Error("timed out"), { code: "TIMEOUT" })));
    req.on("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.end();
  });
}

/** Tries until the real client gets 200, for at most `withinMs`; every answer on the way. */
async function untilServed(agentd: AgentdProcess, ca: string, token: string, withinMs: number): Promise<(number | string)[]> {
  const started = performance.now();
  const attempts: (number | string)[] = [];
  while (performance.now() - started < withinMs) {
    const answer = await tryOnce(agentd, ca, token);
    attempts.push(answer);
    if (answer === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return attempts;
}

function openFiles(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** The operator listener's /readyz: 200 when the database answers. It needs a descriptor of its own. */
async function readyz(agentd: AgentdProcess): Promise<number | string> {
  try {
    return (await fetch(`${agentd.opsUrl}/readyz`, { signal: AbortSignal.timeout(5_000) })).status;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * While a flood holds what the cap let in: the database answers, and the
 * process's open files (at most `peak` so far, or now) leave at least half
 * the reserve free. The peak seen.
 */
async function expectRoomDuringFlood(agentd: AgentdProcess, peak: number): Promise<number> {
  peak = Math.max(peak, openFiles(agentd.pid));
  expect(await readyz(agentd)).toBe(200);
  peak = Math.max(peak, openFiles(agentd.pid));
  expect(peak).toBeLessThanOrEqual(FILE_LIMIT - RESERVED_FILES / 2);
  return peak;
}

describe.skipIf(process.platform !== "linux")("connection floods against a server limited to 512 open files", () => {
  const token = "flood-admin-token-0123456789abcdef";
  let tmp: string;
  let agentd: AgentdProcess;
  let receiver: WebhookReceiver;
  let ca: string;

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), "agentd-flood-"));
    receiver = await startWebhookReceiver();
    await ownDataDir(path.join(tmp, "data"), [AGENT]);
    agentd = await spawnAgentd(
      {
        AGENTD_ADMIN_TOKEN: token,
        AGENTD_DATA_DIR: path.join(tmp, "data"),
        AGENTD_TLS_HANDSHAKE_TIMEOUT: `${HANDSHAKE_BOUND_MS}ms`,
        AGENTD_IDLE_TIMEOUT: `${IDLE_BOUND_MS}ms`,
        AGENTD_WEBHOOK_URLS: receiver.url,
        AGENTD_WEBHOOK_SECRET: WEBHOOK_SECRET,
      },
      { cwd: tmp, fileLimit: FILE_LIMIT },
    );
    ca = await readFile(agentd.certPath, "utf8");
  }, 120_000);
  afterAll(async () => {
    if (agentd?.alive()) await agentd.kill("SIGKILL");
    await receiver?.close();
    await rm(tmp, { recursive: true, force: true });
  });

  it("700 that never start TLS: capped below the file limit, closed after the handshake bound, then served", async () => {
    expect(await tryOnce(agentd, ca, token)).toBe(200);
    const { port, hostname } = new URL(agentd.url);

    const filesBefore = openFiles(agentd.pid);
    const flood: net.Socket[] = [];
    let peak = 0;
    try {
      await Promise.all(
        Array.from(
          { length: 700 },
          () =>
            new Promise<void>((resolve) => {
              const socket = net.connect({ port: Number(port), host: hostname });
              flood.push(socket);
              // Connected, or refused by the cap: either way it was tried.
              socket.once("connect", () => {
                peak = Math.max(peak, openFiles(agentd.pid));
                resolve();
              });
              socket.once("error", () => resolve());
              socket.on("error", () => undefined);
            }),
        ),
      );
      peak = await expectRoomDuringFlood(agentd, peak);
      // The cap was reached, so the rest of the test means something: the
      // flood's own descriptors (about CAP; seen: CAP, or CAP + 1 for one
      // being refused), give or take a few the process closed meanwhile.
      expect(peak - filesBefore, `${filesBefore} open files before the flood, ${peak} at its peak`).toBeGreaterThanOrEqual(CAP - 4);

      const attempts = await untilServed(agentd, ca, token, HANDSHAKE_BOUND_MS + SLACK_MS);
      const summary = `${attempts.length} attempts (${[...new Set(attempts)].join(", ")}); peak ${peak} files; ${flood.filter((socket) => !socket.destroyed).length} flood sockets still open`;
      console.log(`flood before TLS: ${summary}`);
      expect(attempts.at(-1), summary).toBe(200);
      expect(agentd.alive()).toBe(true);
    } finally {
      for (const socket of flood) socket.destroy();
    }
  }, 120_000);

  it("600 from 100 addresses that finish TLS and say nothing: each closed after the idle bound, then a pause commits and is delivered", async () => {
    const { port, hostname } = new URL(agentd.url);
    const handshaken: { socket: tls.TLSSocket; closedByServer: Promise<boolean> }[] = [];
    const sockets: tls.TLSSocket[] = [];
    let peak = 0;
    try {
      await Promise.all(
        Array.from(
          { length: 600 },
          (_, i) =>
            new Promise<void>((resolve) => {
              // 127.0.0.2 to 127.0.0.101: one host reaches all of 127/8 on Linux's loopback.
              const tcp = net.connect({ port: Number(port), host: hostname, localAddress: `127.0.0.${2 + (i % 100)}` });
              const socket = tls.connect({ socket: tcp, host: hostname, ca });
              sockets.push(socket);
              socket.on("error", () => undefined);
              socket.once("secureConnect", () => {
                peak = Math.max(peak, openFiles(agentd.pid));
                handshaken.push({
                  socket,
                  // The server ends it: we never write, end or destroy it before the test is over.
                  closedByServer: new Promise((closed) => socket.once("close", () => closed(true))),
                });
                resolve();
              });
              socket.once("close", () => resolve());
            }),
        ),
      );
      await expectRoomDuringFlood(agentd, peak);
      // The cap was reached by connections that did finish their handshake.
      expect(handshaken.length).toBeGreaterThan(CAP - 20);

      const bound = new Promise<"bound passed">((resolve) => setTimeout(() => resolve("bound passed"), IDLE_BOUND_MS + SLACK_MS).unref());
      const outcome = await Promise.race([Promise.all(handshaken.map((h) => h.closedByServer)).then(() => "all closed"), bound]);
      const open = handshaken.filter((h) => !h.socket.closed).length;
      expect(outcome, `${open} of ${handshaken.length} handshaken connections still open`).toBe("all closed");

      const attempts = await untilServed(agentd, ca, token, SLACK_MS);
      expect(attempts.at(-1), attempts.join(", ")).toBe(200);
      const before = receiver.received.length;
      const pause = await agentd.call("POST", `/agents/by-number/${AGENT.number}/pause`, { token, body: { reason: "after the flood" } });
      expect(pause.status).toBe(204);
      const status = await agentd.call("GET", `/agents/by-number/${AGENT.number}`, { token });
      expect(status.json).toMatchObject({ paused: true, paused_reason: "after the flood" });
      await expect.poll(() => receiver.received.length, { timeout: SLACK_MS }).toBeGreaterThan(before);
      expect(JSON.parse(receiver.received.at(-1)!.body)).toMatchObject({ name: "agent_paused", data: { agent_number: AGENT.number, paused_reason: "after the flood" } });
      expect(agentd.alive()).toBe(true);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  }, 120_000);
});
