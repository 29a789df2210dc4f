// What the log-output tests share: `agentd serve` as a real child process
// whose standard output this test process reads (or stops reading), with a
// JSON line per request, on a data directory of the file's own.
//
//   const { start } = useLogOutputServers();   // hooks: one data directory, servers killed after each test
//   const server = await start();
//   server.child.stdout!.pause();          // the reader stops reading
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, vi } from "vitest";
import { suiteAgents } from "./agents.js";
import { ownDataDir } from "./data-dir.js";
import { spawnAgentd, type AgentdProcess } from "./process.js";

export const TOKEN = "log-output-test-admin-token";
export const SHUTDOWN_TIMEOUT_MS = 2000;

/**
 * Registers the file's hooks and returns how to start a server: one data
 * directory for every server of the file, one after the other (the embedded
 * database is created once), each killed after its test.
 */
export interface LogOutputServers {
  start: (env?: Record<string, string>) => Promise<AgentdProcess>;
  /** The file's data directory (set once its beforeAll has run). */
  dataDir: () => string;
}

export function useLogOutputServers(): LogOutputServers {
  let dataDir = "";
  let agentd: AgentdProcess | undefined;
  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "agentd-log-"));
    // The agents read by the tests (ids 1 and 2), and no demo seed.
    await ownDataDir(dataDir, suiteAgents());
  });
  afterEach(async () => {
    if (agentd?.alive()) await agentd.kill("SIGKILL");
    agentd = undefined;
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  const start = async (env: Record<string, string> = {}): Promise<AgentdProcess> => {
    agentd = await spawnAgentd(
      {
        AGENTD_DATA_DIR: dataDir,
        AGENTD_ADMIN_TOKEN: TOKEN,
        // One JSON line per request.
        AGENTD_LOG_LEVEL: "info",
        AGENTD_SHUTDOWN_TIMEOUT: `${SHUTDOWN_TIMEOUT_MS}ms`,
        ...env,
      },
      { cwd: dataDir },
    );
    return agentd;
  };
  return { start, dataDir: () => dataDir };
}

export interface LogLine {
  level: number;
  msg: string;
  reqId?: string;
  statusCode?: number;
  droppedLines?: number;
}

/** The JSON lines received so far; every line must be one. */
export function lines(server: AgentdProcess): LogLine[] {
  return server
    .logs()
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as LogLine);
}

/** Waits (bounded) until `ready` holds for the lines received, then returns them. */
export function linesWhen(server: AgentdProcess, ready: (all: LogLine[]) => boolean): Promise<LogLine[]> {
  return vi.waitFor(
    () => {
      const all = lines(server);
      if (!ready(all)) throw new Error(`log lines never got there; last lines:\n${server.logs().slice(-2000)}`);
      return all;
    },
    { timeout: 30_000, interval: 100 },
  );
}

/** Sends SIGTERM and resolves with how the process ended and how long it took. */
export async function stop(server: AgentdProcess): Promise<{ code: number | null; ms: number }> {
  const sent = performance.now();
  const { code } = await server.kill("SIGTERM");
  return { code, ms: performance.now() - sent };
}

export const requestLines = (all: LogLine[]) => all.filter((line) => line.reqId !== undefined);
export const stalled = (all: LogLine[]) => all.filter((line) => line.msg.startsWith("log output stalled"));
export const resumed = (all: LogLine[]) => all.filter((line) => line.msg.startsWith("log output resumed"));

