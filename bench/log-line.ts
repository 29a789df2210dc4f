// The cost of one request log line on its own, where `npm run bench` can only
// see it inside a whole request: the server's bounded output against pino's
// own asynchronous destination (sonic-boom, what the server used before),
// writing to whatever standard output is, each in a process of its own. CPU
// time is the whole process's (user + system, every thread), so sonic-boom's
// writes from libuv's thread pool count too. The figures go to standard error.
//
//   npx tsx bench/log-line.ts > /dev/null               # a file (/dev/null)
//   npx tsx bench/log-line.ts | cat > /dev/null         # a pipe with a reader that keeps up
//   npx tsx bench/log-line.ts --lines-per-turn 8        # lines logged per event-loop turn (default 1)
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { pino, type Logger } from "pino";
import { createLogger } from "../server/log/logger.js";
import { openStdio } from "../server/log/stdio.js";

const { values: flags } = parseArgs({
  options: {
    /** Internal: measure this one output here ("sonic" or "bounded"). */
    output: { type: "string", default: "" },
    "lines-per-turn": { type: "string", default: "1" },
    lines: { type: "string", default: "200000" },
    runs: { type: "string", default: "3" },
  },
});
const perTurn = Number(flags["lines-per-turn"]);
const total = Number(flags.lines);

/** Logs `total` request lines, `perTurn` per event-loop turn, and resolves with the CPU µs per line once all are written. */
function measure(logger: Logger, flushed: (callback: () => void) => void): Promise<number> {
  return new Promise((resolve) => {
    const started = process.cpuUsage();
    let n = 0;
    const turn = (): void => {
      for (let i = 0; i < perTurn && n < total; i++, n++) {
        logger.info(
          { reqId: `3f1b2c4d-0000-4000-8000-${String(n).padStart(12, "0")}`, method: "GET", url: "/1.0/agents/by-id/42", statusCode: 200, responseTime: 1.3 },
          "request completed",
        );
      }
      if (n < total) setImmediate(turn);
      else
        flushed(() => {
          const used = process.cpuUsage(started);
          resolve((used.user + used.system) / total);
        });
    };
    turn();
  });
}

/** One measurement in this process, for `--output`: prints the µs per line on stdout's behalf to stderr as JSON. */
async function child(output: string): Promise<void> {
  let perLine: number;
  if (output === "sonic") {
    const sonic = pino.destination({ dest: 1, sync: false });
    perLine = await measure(pino({ level: "info", base: { service: "agentd" } }, sonic), (done) => sonic.flush(done));
  } else {
    const stdio = openStdio(4 * 1024 * 1024);
    perLine = await measure(createLogger(stdio.stdout, "info"), (done) => stdio.stdout.flush(done));
  }
  process.stderr.write(`${JSON.stringify({ perLine })}\n`);
}

/** Runs each output in a process of its own (so neither sets up file descriptor 1 for the other), alternating. */
function main(): void {
  const names = { sonic: "pino.destination (sonic-boom, sync: false)", bounded: "bounded output (server/log)" };
  const results: Record<keyof typeof names, number[]> = { sonic: [], bounded: [] };
  for (let run = 0; run < Number(flags.runs); run++) {
    for (const output of ["sonic", "bounded"] as const) {
      const args = [...process.execArgv, fileURLToPath(import.meta.url), "--output", output, "--lines-per-turn", String(perTurn), "--lines", String(total)];
      const result = spawnSync(process.execPath, args, { stdio: ["ignore", "inherit", "pipe"], encoding: "utf8" });
      if (result.status !== 0) throw new Error(`${output} run failed: ${result.stderr}`);
      results[output].push((JSON.parse(result.stderr.trim().split("\n").pop()!) as { perLine: number }).perLine);
    }
  }
  for (const output of ["sonic", "bounded"] as const) {
    const values = results[output];
    const median = [...values].sort((a, b) => a - b)[values.length >> 1]!;
    process.stderr.write(`${names[output]}: ${median.toFixed(2)} µs CPU per line (median of ${values.map((v) => v.toFixed(2)).join(", ")}), ${perTurn} per turn\n`);
  }
}

if (flags.output === "") main();
else await child(flags.output);
