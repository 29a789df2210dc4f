// A flood of silent connections must not take the service down, through
// real parts: more idle TCP connections than the process may have files,
// never starting a TLS handshake, are closed after
// AGENTD_TLS_HANDSHAKE_TIMEOUT, and a real client gets its 200 again while
// the flood's sockets are still held open by the test. It runs alone
// (vitest.config.ts): it counts the process's open files. Made-up tokens
// are in test/rate-budget.test.ts.
import { readdirSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import https from "node:https";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SUITE_AGENTS } from "./helpers/agents.js";
import { ownDataDir } from "./helpers/data-dir.js";
import { spawnAgentd, type AgentdProcess } from "./helpers/process.js";

/** The one agent the server holds: what the real client reads. */
const AGENT = SUITE_AGENTS.pausable;

// Long enough for the flood to be opened and seen before the bound, short
// enough to keep the test quick; the real client must succeed within it plus SLACK_MS.
const HANDSHAKE_BOUND_MS = 5_000;
const SLACK_MS = 10_000;
const FILE_LIMIT = 512;
const FLOOD = 700;

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

function openFiles(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

describe.skipIf(process.platform !== "linux")("idle connections that never start TLS", () => {
  const token = "flood-admin-token-0123456789abcdef";
  let tmp: string;
  let agentd: AgentdProcess;
  let ca: string;

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), "agentd-flood-"));
    await ownDataDir(path.join(tmp, "data"), [AGENT]);
    agentd = await spawnAgentd(
      { AGENTD_ADMIN_TOKEN: token, AGENTD_DATA_DIR: path.join(tmp, "data"), AGENTD_TLS_HANDSHAKE_TIMEOUT: `${HANDSHAKE_BOUND_MS}ms` },
      { cwd: tmp, fileLimit: FILE_LIMIT },
    );
    ca = await readFile(agentd.certPath, "utf8");
  }, 120_000);
  afterAll(async () => {
    if (agentd?.alive()) await agentd.kill("SIGKILL");
    await rm(tmp, { recursive: true, force: true });
  });

  it(`more than ${FILE_LIMIT} of them: closed after the bound, and a real client gets its 200 while they are held`, async () => {
    expect(await tryOnce(agentd, ca, token)).toBe(200);
    const { port, hostname } = new URL(agentd.url);

    const flood: net.Socket[] = [];
    let peak = 0;
    const opened = performance.now();
    try {
      await Promise.all(
        Array.from(
          { length: FLOOD },
          () =>
            new Promise<void>((resolve) => {
              const socket = net.connect({ port: Number(port), host: hostname });
              flood.push(socket);
              // Connected, or refused/reset by a server out of files: either way it was tried.
              socket.once("connect", () => {
                peak = Math.max(peak, openFiles(agentd.pid));
                resolve();
              });
              socket.once("error", () => resolve());
              socket.on("error", () => undefined);
            }),
        ),
      );
      peak = Math.max(peak, openFiles(agentd.pid));
      // The flood did fill the process's file table, so the rest of the test means something.
      expect(peak).toBeGreaterThan(FILE_LIMIT - 20);

      let answer: number | string = "not tried";
      const attempts: (number | string)[] = [];
      while (performance.now() - opened < HANDSHAKE_BOUND_MS + SLACK_MS) {
        answer = await tryOnce(agentd, ca, token);
        attempts.push(answer);
        if (answer === 200) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const summary = `${attempts.length} attempts (${[...new Set(attempts)].join(", ")}) in ${Math.round(performance.now() - opened)} ms; peak ${peak} files; ${flood.filter((socket) => !socket.destroyed).length} flood sockets still open`;
      console.log(`flood: ${summary}`);
      expect(answer, summary).toBe(200);
      expect(agentd.alive()).toBe(true);
    } finally {
      for (const socket of flood) socket.destroy();
    }
  }, 120_000);
});
