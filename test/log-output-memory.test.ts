// The output under a reader that never reads, as a stalled log shipper
// would: `agentd serve` keeps serving with bounded memory while its
// standard output (a socket pair this test process stops reading) is stuck,
// and still stops on SIGTERM in time. It runs alone (vitest.config.ts): it
// measures the process's memory under a load of its own.
import autocannon from "autocannon";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { AgentdProcess } from "./helpers/process.js";
import { lines, requestLines, SHUTDOWN_TIMEOUT_MS, stop, TOKEN, useLogOutputServers } from "./helpers/log-output.js";

/** The bound on memory growth under a stuck reader. */
const MAX_RSS_GROWTH = 64 * 1024 * 1024;
/**
 * The same with a 2 KB log line: the 40,000 sent after the warm-up are 80 MB
 * of log, past the memory bound if it were kept. (Lines longer than the
 * socket takes at once can be cut when the process exits on a stuck reader,
 * which the last check would then read as a torn line.)
 */
// The path, not a query: the log leaves the query out.
const MEDIUM = `/agents/by-id/${"x".repeat(2000)}`;

/** Resident memory of a process, in bytes (VmRSS of /proc/<pid>/status). */
function rss(pid: number): number {
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  if (kib === undefined) throw new Error(`no VmRSS for ${pid}`);
  return Number(kib) * 1024;
}

/**
 * Sends exactly `amount` requests for `pathAndQuery` over 16 keep-alive
 * connections; resolves with how many were answered, by status class.
 */
function load(server: AgentdProcess, pathAndQuery: string, amount: number): Promise<{ ok: number; rejected: number }> {
  return new Promise((resolve, reject) => {
    autocannon(
      { url: server.url + pathAndQuery, headers: { "x-auth-token": TOKEN }, connections: 16, amount, timeout: 30 },
      (err: Error | null, result) => (err ? reject(err) : resolve({ ok: result["2xx"], rejected: result["4xx"] })),
    );
  });
}

const { start } = useLogOutputServers();

describe("a reader that never reads", () => {
  it("keeps serving with bounded memory, and SIGTERM still exits within AGENTD_SHUTDOWN_TIMEOUT + 5 s", async () => {
    const server = await start();
    server.child.stdout!.pause();
    // RSS swings by tens of MB with the garbage collector's cycle, so the
    // memory kept is read as the lowest of a few readings, before and after.
    const readings = async (rounds: number): Promise<{ answered: number; lowest: number }> => {
      let answered = 0;
      let lowest = Infinity;
      for (let i = 0; i < rounds; i++) {
        answered += (await load(server, MEDIUM, 5_000)).rejected;
        lowest = Math.min(lowest, rss(server.pid));
      }
      return { answered, lowest };
    };
    // Warm-up: the JIT and the caches settle; the pipe and the 4 MB log buffer fill.
    const before = await readings(2);
    expect(before.answered).toBe(10_000);
    const during = await readings(5);
    const after = await readings(3);
    const answered = during.answered + after.answered;
    expect(answered).toBe(40_000);
    const growth = after.lowest - before.lowest;
    expect(growth, `RSS grew by ${(growth / 2 ** 20).toFixed(1)} MiB`).toBeLessThan(MAX_RSS_GROWTH);
    expect((await server.call("GET", "/agents/by-id/1", { token: TOKEN })).status).toBe(200);

    const { code, ms } = await stop(server);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(SHUTDOWN_TIMEOUT_MS + 5_000);

    // What the socket held, read now: far fewer lines than requests, so the
    // output really was stuck (not read in time by a busy test process).
    const stdout = server.child.stdout!;
    stdout.resume();
    if (!stdout.readableEnded) await new Promise((resolve) => stdout.once("end", resolve));
    expect(requestLines(lines(server)).length).toBeLessThan(answered / 2);
  }, 300_000);
});
