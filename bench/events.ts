// `npm run bench:events`: pause with an event sink configured against pause
// without one, on the shipped server (PGlite), the outbox's cost. Each of
// the 32 connections pauses its own logged-in agent, as operators each
// pause theirs, alternating two reasons, so every pause changes state and
// records an event (the main bench's pause repeats one reason: no event).
// The sink is a webhook receiver in this process answering 204; the relay
// delivers while the load runs, so its work is in the figure, and the
// report says how many of the recorded events it delivered during the load
// (a relay that fell behind would flatter the figure).
//
//   npm run bench:events                 # 3 rounds of 10 s per target, alternating
//   npm run bench:events -- --quick      # 1 round of 3 s
//   npm run bench:events -- --cpu-prof DIR   # V8 profiles of each server (bench/profile-summary.ts)
import http from "node:http";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { repoRoot } from "../devkit/root.js";
import type { AddressInfo } from "node:net";
import { BENCH_TOKEN, benchAgents, writeCertificate } from "./fixtures.js";
import { choosePinning, cpuSeconds, runDrive, runToEnd, stop, waitFor } from "./processes.js";
import { median } from "./stats.js";
import { agentdBin, server, serverEnv, type BenchContext } from "./systems-under-test.js";

const repo = repoRoot;
const { values: flags } = parseArgs({ options: { quick: { type: "boolean", default: false }, rounds: { type: "string" }, duration: { type: "string" }, "cpu-prof": { type: "string" } } });
const rounds = Number(flags.rounds ?? (flags.quick ? 1 : 3));
const durationSeconds = Number(flags.duration ?? (flags.quick ? 3 : 10));

let delivered = 0;
const receiver = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    delivered++;
    res.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));

/** Waits until the receiver has `count` deliveries (and no more arrive for a moment: requests cut off by the load's end may still have recorded events). */
async function drained(count: number): Promise<void> {
  const deadline = performance.now() + 300_000;
  let last = -1;
  while (delivered < count || delivered !== last) {
    if (performance.now() > deadline) throw new Error(`the relay delivered ${delivered} of ${count} events in 5 minutes`);
    last = delivered;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

const work = await mkdtemp(path.join(os.tmpdir(), "agentd-bench-events-"));
const pinning = choosePinning(os.cpus().length);
try {
  const cert = await writeCertificate(work);
  const ctx: BenchContext = { repo, work, cert, core: pinning.target, serverNodeFlags: flags["cpu-prof"] ? ["--cpu-prof", "--cpu-prof-dir", path.resolve(flags["cpu-prof"])] : [], serverStdout: "null" };
  const agentsFile = path.join(work, "agents.json");
  const agents = benchAgents();
  await writeFile(agentsFile, JSON.stringify(agents));
  const CONNECTIONS = 32;
  const pausedAgents = agents.filter((agent) => agent.logged).slice(0, CONNECTIONS);
  const cli = agentdBin(repo);
  const variants = {
    "no sink": { AGENTD_DATA_DIR: path.join(work, "plain") },
    "webhook sink": {
      AGENTD_DATA_DIR: path.join(work, "events"),
      AGENTD_WEBHOOK_URLS: hookUrl,
      AGENTD_WEBHOOK_SECRET: `whsec_${Buffer.alloc(32, 7).toString("base64")}`,
    },
  };
  for (const settings of Object.values(variants)) {
    await runToEnd(process.execPath, [cli, "import", agentsFile], { core: null, cwd: work, env: serverEnv(ctx, { AGENTD_DATA_DIR: settings.AGENTD_DATA_DIR }) });
  }
  interface Round {
    rps: number;
    /** The server's CPU time per pause, from the load's start until every event of it was delivered. */
    cpuUs: number;
    deliveredDuringLoad: number;
    pauses: number;
    drainSeconds: number;
  }
  const results: Record<keyof typeof variants, Round[]> = { "no sink": [], "webhook sink": [] };
  for (let round = 0; round < rounds; round++) {
    for (const [name, settings] of Object.entries(variants) as [keyof typeof variants, (typeof variants)[keyof typeof variants]][]) {
      const target = await server(ctx, { ...settings, AGENTD_LOG_LEVEL: "info" }, `${name.replace(" ", "-")}.log`, ctx.serverNodeFlags);
      try {
        await waitFor(`${target.base}/agents`, { status: 200, headers: { "x-auth-token": BENCH_TOKEN }, ca: cert.cert, timeoutMs: 60_000, child: target.main });
        const before = delivered;
        const cpuBefore = cpuSeconds(target.main.pid);
        const result = await runDrive(repo, pinning.load, {
          url: target.base,
          paths: pausedAgents.map((agent) => `${new URL(target.base).pathname}/agents/by-number/${agent.number}/pause`),
          method: "POST",
          headers: { "x-auth-token": BENCH_TOKEN, "content-type": "application/json" },
          bodies: [JSON.stringify({ reason: "bench a" }), JSON.stringify({ reason: "bench b" })],
          connections: CONNECTIONS,
          durationSeconds,
          expectStatus: 204,
        });
        if (result.unexpected > 0 || result.errors > 0) throw new Error(`${name}: ${JSON.stringify(result.unexpectedStatuses)}, ${result.errors} errors`);
        const deliveredDuringLoad = delivered - before;
        const loadEnded = performance.now();
        // Every pause changed its agent's state, so each recorded one event:
        // the cost of a pause with a sink includes delivering it.
        if (name === "webhook sink") await drained(before + result.expected);
        const cpuAfter = cpuSeconds(target.main.pid);
        if (cpuBefore === null || cpuAfter === null) throw new Error("the server's CPU time cannot be read (/proc)");
        results[name].push({
          rps: result.rps,
          cpuUs: ((cpuAfter - cpuBefore) / result.expected) * 1e6,
          deliveredDuringLoad,
          pauses: result.expected,
          drainSeconds: (performance.now() - loadEnded) / 1000,
        });
        process.stderr.write(`[bench:events] round ${round + 1} ${name}: ${result.rps.toFixed(0)} pauses/s, ${results[name].at(-1)!.cpuUs.toFixed(0)} µs CPU per pause\n`);
      } finally {
        for (const child of target.processes) await stop(child);
      }
    }
  }
  const plain = results["no sink"];
  const sink = results["webhook sink"];
  const rpsRatio = median(sink.map((r) => r.rps)) / median(plain.map((r) => r.rps));
  // CPU-bound on its core, the server sustains 1 / (CPU per pause) pauses a second.
  const sustainedRatio = median(plain.map((r) => r.cpuUs)) / median(sink.map((r) => r.cpuUs));
  const sum = (rows: Round[], key: "deliveredDuringLoad" | "pauses"): number => rows.reduce((total, r) => total + r[key], 0);
  console.log(`| Target | Pauses/s during the load (median of ${rounds} × ${durationSeconds} s) | CPU per pause, deliveries included | Runs (pauses/s) |`);
  console.log("|---|---|---|---|");
  for (const [name, rows] of Object.entries(results)) {
    console.log(`| server, PGlite, ${name} | ${median(rows.map((r) => r.rps)).toFixed(0)} | ${median(rows.map((r) => r.cpuUs)).toFixed(0)} µs | ${rows.map((r) => r.rps.toFixed(0)).join(", ")} |`);
  }
  // The measure: the API's pause rate with a sink configured (the
  // outbox row in the pause's own statement, the relay running in the same
  // process) against without. The stricter one also charges every
  // delivery, including those made after the load.
  console.log(`\nPauses/s with a sink: ${rpsRatio.toFixed(2)}× without (goal ≥ 0.8×: ${rpsRatio >= 0.8 ? "met" : "MISSED"}).`);
  console.log(`Sustained, every delivery charged (CPU per pause): ${sustainedRatio.toFixed(2)}× without.`);
  console.log(`${sum(sink, "deliveredDuringLoad")} of ${sum(sink, "pauses")} events were delivered before the loads ended, the rest within ${Math.max(...sink.map((r) => r.drainSeconds)).toFixed(1)} s after each.`);
} finally {
  receiver.close();
  await rm(work, { recursive: true, force: true });
}
