// `npm run bench:events`: pause with an event sink configured against pause
// without one, on the shipped server (PGlite), the outbox's cost. Each
// connection alternates two reasons on one agent, so pauses change state
// and record events (the main bench's pause repeats one reason: no event).
// The sink is a webhook receiver in this process answering 204; the relay
// delivers while the load runs, so its work is in the figure.
//
//   npm run bench:events                 # 3 rounds of 10 s per target, alternating
//   npm run bench:events -- --quick      # 1 round of 3 s
import http from "node:http";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { AddressInfo } from "node:net";
import { BENCH_TOKEN, HOT_AGENT_NUMBER, benchAgents, writeCertificate } from "./fixtures.js";
import { choosePinning, runDrive, runToEnd, stop, waitFor } from "./processes.js";
import { median } from "./stats.js";
import { server, serverEnv, type BenchContext } from "./targets.js";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { values: flags } = parseArgs({ options: { quick: { type: "boolean", default: false }, rounds: { type: "string" }, duration: { type: "string" } } });
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
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

const work = await mkdtemp(path.join(os.tmpdir(), "agentd-bench-events-"));
const pinning = choosePinning(os.cpus().length);
try {
  const cert = await writeCertificate(work);
  const ctx: BenchContext = { repo, work, cert, core: pinning.target, serverNodeFlags: [], serverStdout: "null" };
  const agentsFile = path.join(work, "agents.json");
  await writeFile(agentsFile, JSON.stringify(benchAgents()));
  const cli = path.join(repo, "dist", "server", "cli", "agentd.js");
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
  const rps: Record<string, number[]> = { "no sink": [], "webhook sink": [] };
  let recordedDuringLoad = 0;
  for (let round = 0; round < rounds; round++) {
    for (const [name, settings] of Object.entries(variants)) {
      const target = await server(ctx, { ...settings, AGENTD_LOG_LEVEL: "info" }, `${name.replace(" ", "-")}.log`);
      try {
        await waitFor(`${target.base}/agents`, { status: 200, headers: { "x-auth-token": BENCH_TOKEN }, ca: cert.cert, timeoutMs: 60_000, child: target.main });
        const before = delivered;
        const result = await runDrive(repo, pinning.load, {
          url: `${target.base}/agents/by-number/${HOT_AGENT_NUMBER}/pause`,
          method: "POST",
          headers: { "x-auth-token": BENCH_TOKEN, "content-type": "application/json" },
          bodies: [JSON.stringify({ reason: "bench a" }), JSON.stringify({ reason: "bench b" })],
          connections: 32,
          durationSeconds,
          expectStatus: 204,
        });
        if (result.unexpected > 0 || result.errors > 0) throw new Error(`${name}: ${JSON.stringify(result.unexpectedStatuses)}, ${result.errors} errors`);
        rps[name]!.push(result.rps);
        if (name === "webhook sink") recordedDuringLoad += delivered - before;
        process.stderr.write(`[bench:events] round ${round + 1} ${name}: ${result.rps.toFixed(0)} pauses/s\n`);
      } finally {
        for (const child of target.processes) await stop(child);
      }
    }
  }
  const plain = median(rps["no sink"]!);
  const withSink = median(rps["webhook sink"]!);
  const ratio = withSink / plain;
  console.log(`| Target | Pauses/s (median of ${rounds} × ${durationSeconds} s) | Runs |`);
  console.log("|---|---|---|");
  console.log(`| server, PGlite, no sink | ${plain.toFixed(0)} | ${rps["no sink"]!.map((r) => r.toFixed(0)).join(", ")} |`);
  console.log(`| server, PGlite, webhook sink | ${withSink.toFixed(0)} | ${rps["webhook sink"]!.map((r) => r.toFixed(0)).join(", ")} |`);
  console.log(`\nWith a sink: ${ratio.toFixed(2)}× without (goal ≥ 0.8×: ${ratio >= 0.8 ? "met" : "MISSED"}); ${recordedDuringLoad} events delivered during the loads.`);
} finally {
  receiver.close();
  await rm(work, { recursive: true, force: true });
}
