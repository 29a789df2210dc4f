// `npm run bench`: starts every target on 127.0.0.1, drives each with
// autocannon from its own process (pinned to another core when possible),
// and prints the medians as a table with the issue's targets checked.
//
//   npm run bench                       # 3 rounds of 10 s after a 3 s warm-up per cell
//   npm run bench -- --quick            # 1 round of 2 s: smoke test
//   npm run bench -- --rounds 5 --duration 15 --only 'server|framework'
//   npm run bench -- --json out.json --cpu-prof /tmp/prof
//   npm run bench -- --quick --growth-only --sizes 100,10000   # the growth table alone
//   npm run bench -- --server-stdout pipe   # the server's log into a pipe read here, not /dev/null
//
// With the main table: the cold start against PGlite alone on the same data
// directory (bench/targets/pglite-alone.js), the framework ceiling with the
// validator as published beside the patched one, and each target's memory.
//
// After the main table (100 agents, every target) comes the growth table
// (bench/growth.ts): 100 to 100,000 agents on PGlite and PostgreSQL.
import { existsSync, readdirSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { repoRoot } from "../devkit/root.js";
import type { DriveResult, DriveSpec } from "./drive.js";
import {
  AGENT_COUNT,
  BENCH_TOKEN,
  HOT_AGENT_ID,
  OPERATIONS,
  PAUSE_BODY,
  benchAgents,
  writeCertificate,
  type OperationName,
} from "./fixtures.js";
import { codeCacheDir } from "../server/cli/load-serving.js";
import { BASE_PATH } from "../server/contract.js";
import { freePort } from "../devkit/ports.js";
import { pristineValidator, type PristineValidator } from "../devkit/pristine-validator.js";
import { createDatabase } from "./database.js";
import { GROWTH_SIZES, runGrowth } from "./growth.js";
import { growthReport } from "./growth-report.js";
import { choosePinning, cpuSeconds, memory, request, runDrive, runToEnd, spawnOn, stop, waitFor } from "./processes.js";
import { median } from "./stats.js";
import { report, type CellResult, type ColdStartRun, type MemoryRow, type RunInfo } from "./report.js";
import { agentdBin, serverEnv, spawnServer, targetSpecs, type BenchContext, type RunningTarget, type TargetSpec } from "./systems-under-test.js";

const repo = repoRoot;

const { values: flags } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    rounds: { type: "string" },
    duration: { type: "string" },
    warmup: { type: "string" },
    connections: { type: "string", default: "32" },
    "cold-starts": { type: "string" },
    only: { type: "string" },
    json: { type: "string" },
    "cpu-prof": { type: "string" },
    "database-url": { type: "string" },
    "growth-only": { type: "boolean", default: false },
    "skip-growth": { type: "boolean", default: false },
    sizes: { type: "string" },
    "server-stdout": { type: "string", default: "null" },
  },
});

function positive(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number, got ${raw}`);
  return value;
}

const settings = {
  rounds: Math.round(positive("rounds", flags.rounds, flags.quick ? 1 : 3)),
  durationSeconds: Math.round(positive("duration", flags.duration, flags.quick ? 2 : 10)),
  warmupSeconds: Math.round(positive("warmup", flags.warmup, flags.quick ? 1 : 3)),
  connections: Math.round(positive("connections", flags.connections, 32)),
  coldStarts: Math.round(positive("cold-starts", flags["cold-starts"], flags.quick ? 1 : 5)),
};
function stdoutSetting(raw: string | undefined): "null" | "pipe" {
  if (raw === "null" || raw === "pipe") return raw;
  throw new Error(`--server-stdout must be null or pipe, got ${raw}`);
}
const serverStdout = stdoutSetting(flags["server-stdout"]);
const only = flags.only === undefined ? null : new RegExp(flags.only);
const postgresUrl = flags["database-url"] ?? process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}


function driveSpec(target: RunningTarget, op: OperationName): DriveSpec {
  const operation = OPERATIONS[op];
  const headers: Record<string, string> = { "x-auth-token": BENCH_TOKEN };
  const spec: DriveSpec = {
    url: target.base + operation.path,
    method: operation.method,
    headers,
    connections: settings.connections,
    durationSeconds: settings.durationSeconds,
    expectStatus: op === "pause" ? 204 : 200,
  };
  if (op === "pause") {
    headers["content-type"] = "application/json";
    spec.body = PAUSE_BODY;
  }
  return spec;
}

function drive(core: number | null, spec: DriveSpec): Promise<DriveResult> {
  return runDrive(repo, core, spec);
}

/** One request per operation with certificate verification on; server bodies must equal the limit's bytes. */
async function verify(spec: TargetSpec, target: RunningTarget, ca: string, reference: Map<OperationName, string>): Promise<void> {
  for (const op of spec.ops) {
    const drive = driveSpec(target, op);
    const answer = await request(drive.url, { method: drive.method, headers: drive.headers, body: drive.body, ca });
    if (answer.status !== drive.expectStatus) {
      throw new Error(`${spec.key} ${op}: expected ${drive.expectStatus}, got ${answer.status} ${answer.body.slice(0, 300)}`);
    }
    if (!spec.samePayloads || op === "pause") continue;
    const expected = reference.get(op);
    if (expected === undefined) reference.set(op, answer.body);
    else if (expected !== answer.body) throw new Error(`${spec.key} ${op}: body differs from the limit's (${answer.body.slice(0, 200)})`);
  }
}

interface ColdStarts {
  /** `agentd serve`, process spawn to its first 200. */
  serverMs: number[];
  /** The start before them that compiled the server and wrote its code cache (a new install or an upgrade); null when one existed. */
  firstMs: number | null;
  /** bench/targets/pglite-alone.js on the same data directory, process spawn to its first query answered. */
  pgliteMs: number[];
  /** PGlite alone's resident memory once it answered: PGlite's own share of the server's. */
  pgliteMemory: { rssMiB: number; peakMiB: number } | null;
}

/**
 * Cold starts on an existing data directory, the server and PGlite alone in
 * turns, on `core` (null: every core): the server's start against the
 * embedded database's own, measured alike in the same run.
 */
async function coldStarts(ctx: BenchContext, core: number | null, dataDir: string, count: number, ca: string): Promise<ColdStarts> {
  const on = { ...ctx, core };
  /** One start, spawn to its first 200, then stopped (which lets it finish writing its code cache). */
  const start = async (): Promise<number> => {
    const port = await freePort();
    const started = performance.now();
    const child = spawnServer(on, { AGENTD_DATA_DIR: dataDir, AGENTD_PORT: String(port) }, "cold-start.log");
    try {
      await waitFor(`https://127.0.0.1:${port}${BASE_PATH}${OPERATIONS.byNumber.path}`, {
        status: 200,
        headers: { "x-auth-token": BENCH_TOKEN },
        ca,
        timeoutMs: 30_000,
        intervalMs: 5,
        child,
      });
      return performance.now() - started;
    } finally {
      await stop(child);
    }
  };
  // A deployment's restarts find the code cache its first start wrote
  // (server/cli/code-cache.ts): measured apart, that first start does not
  // count among them.
  const cacheDir = codeCacheDir(dataDir);
  const hasCache = () => existsSync(cacheDir) && readdirSync(cacheDir).some((name) => name.endsWith(".v8"));
  const firstMs = hasCache() ? null : await start();
  if (!hasCache()) throw new Error(`the first start wrote no code cache in ${cacheDir} (see cold-start.log)`);
  const result: ColdStarts = { serverMs: [], firstMs, pgliteMemory: null, pgliteMs: [] };
  for (let i = 0; i < count; i++) {
    result.serverMs.push(await start());
    const alone = await pgliteAlone(on, dataDir);
    result.pgliteMs.push(alone.ms);
    // The last reading there is; none leaves the row out of the memory table.
    if (alone.memory !== null) result.pgliteMemory = alone.memory;
  }
  return result;
}

/** One run of bench/targets/pglite-alone.js: from spawn to its "answered", and the memory it reports. */
async function pgliteAlone(ctx: BenchContext, dataDir: string): Promise<{ ms: number; memory: { rssMiB: number; peakMiB: number } | null }> {
  const started = performance.now();
  const child = spawnOn(process.execPath, [path.join(repo, "bench", "targets", "pglite-alone.js"), dataDir], {
    core: ctx.core,
    cwd: ctx.work,
    stdout: "pipe",
    stderr: path.join(ctx.work, "pglite-alone.log"),
  });
  let out = "";
  let answeredMs: number | null = null;
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
    if (answeredMs === null && out.includes("answered\n")) answeredMs = performance.now() - started;
  });
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  if (code !== 0 || answeredMs === null) throw new Error(`bench/targets/pglite-alone.js exited ${String(code)} (see ${path.join(ctx.work, "pglite-alone.log")}): ${out}`);
  const memoryLine = out.split("\n").find((line) => line.startsWith("{"));
  return { ms: answeredMs, memory: memoryLine === undefined ? null : (JSON.parse(memoryLine) as { rssMiB: number; peakMiB: number }) };
}

/**
 * How long to wait, once every target is up (they start one after another),
 * before their "after start" memory is read: each has sat idle at least this
 * long since its first answers.
 */
const SETTLE_MS = 2000;

/** The main table: every target at 100 agents. Prints it; returns the raw figures. */
async function mainTable(): Promise<{ info: RunInfo; cells: CellResult[] }> {
  const started = new Date();
  const loadBefore = os.loadavg()[0]!;
  const pinning = choosePinning(os.availableParallelism());
  log(
    pinning.target === null
      ? "taskset unavailable or one core: nothing is pinned"
      : `targets pinned to core ${pinning.target}, load generator to core ${pinning.load}`,
  );
  const work = await mkdtemp(path.join(os.tmpdir(), "agentd-bench-"));
  const running: RunningTarget[] = [];
  let dropDatabase: (() => Promise<void>) | null = null;
  let published: PristineValidator | null = null;
  let failed = true;
  try {
    const cert = await writeCertificate(work);
    const ctx: BenchContext = { repo, work, cert, core: pinning.target, serverNodeFlags: [], serverStdout };
    const agentsFile = path.join(work, "agents.json");
    await writeFile(agentsFile, JSON.stringify(benchAgents()));
    const cli = agentdBin(repo);

    // Data: the same 100 agents in three PGlite directories and one PostgreSQL database.
    const pgliteDir = path.join(work, "data-pglite");
    const externalDir = path.join(work, "data-external");
    const noMetricsDir = path.join(work, "data-nometrics");
    for (const dir of [pgliteDir, noMetricsDir, externalDir]) {
      await runToEnd(process.execPath, [cli, "import", agentsFile], { core: null, cwd: work, env: serverEnv(ctx, { AGENTD_DATA_DIR: dir }) });
    }
    const database = await createDatabase(postgresUrl);
    let postgresNote: string | null = null;
    if (database.url === null) {
      postgresNote = `PostgreSQL target not run: cannot create a database on ${postgresUrl} (${database.reason})`;
      log(postgresNote);
    } else {
      dropDatabase = () => database.drop();
      await runToEnd(process.execPath, [cli, "import", agentsFile], {
        core: null,
        cwd: work,
        env: serverEnv(ctx, { AGENTD_DATA_DIR: path.join(work, "data-pg"), AGENTD_DATABASE_URL: database.url }),
      });
    }
    log(`imported ${AGENT_COUNT} agents`);

    // --only keeps the limit and the framework ceiling, which the table's ratios divide by.
    const specs = targetSpecs({ pgliteDir, noMetricsDir, externalDir, databaseUrl: database.url }).filter(
      (spec) => only === null || ["limit", "framework"].includes(spec.key) || only.test(spec.key),
    );
    // The copy of the validator as published, only for the target that runs it.
    if (specs.some((s) => s.key === "framework-published")) {
      published = await pristineValidator();
      ctx.publishedValidator = published.dir;
    }

    // Cold start first, while nothing else runs: process start to the first
    // 200 on an existing data dir. On the targets' one core, and on every
    // core: the server opens its database in a thread of its own beside the
    // rest of its start, which only more than one core lets run at once.
    const coldStartRuns: ColdStartRun[] = [];
    let pgliteAloneMemory: { rssMiB: number; peakMiB: number } | null = null;
    if (specs.some((s) => s.key === "server")) {
      const everyCore: [string, number | null] = [`every core (${os.availableParallelism()}, unpinned)`, null];
      const placements = pinning.target === null ? [everyCore] : [[`one core (core ${pinning.target})`, pinning.target] as [string, number], everyCore];
      for (const [cores, core] of placements) {
        const cold = await coldStarts(ctx, core, pgliteDir, settings.coldStarts, cert.cert);
        coldStartRuns.push({ cores, serverMs: cold.serverMs, firstMs: cold.firstMs, pgliteMs: cold.pgliteMs });
        pgliteAloneMemory ??= cold.pgliteMemory;
        const first = cold.firstMs === null ? "" : ` (first start, no code cache yet: ${cold.firstMs.toFixed(0)} ms)`;
        log(`cold start on ${cores}: server ${cold.serverMs.map((t) => t.toFixed(0)).join(", ")} ms${first}; PGlite alone ${cold.pgliteMs.map((t) => t.toFixed(0)).join(", ")} ms`);
      }
    }

    if (flags["cpu-prof"]) {
      await mkdir(flags["cpu-prof"], { recursive: true });
      ctx.serverNodeFlags = ["--cpu-prof", "--cpu-prof-dir", path.resolve(flags["cpu-prof"])];
    }
    const targets: Array<{ spec: TargetSpec; target: RunningTarget }> = [];
    const reference = new Map<OperationName, string>();
    // One target at a time, each answering before the next is given a port:
    // a server still starting binds its operator listener to a port the
    // kernel picks (AGENTD_OPS_PORT=0), which could be the one freePort()
    // had just handed the next target and released.
    for (const spec of specs) {
      const target = await spec.start(ctx);
      running.push(target);
      targets.push({ spec, target });
      await waitFor(target.base + OPERATIONS.byNumber.path, {
        status: 200,
        headers: { "x-auth-token": BENCH_TOKEN },
        ca: cert.cert,
        timeoutMs: 60_000,
        child: target.main,
      });
      await verify(spec, target, cert.cert, reference);
      log(`${spec.key} ready at ${target.base}`);
    }
    // Resident memory once started and idle, before any load.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const startMemory = new Map(targets.map(({ spec, target }) => [spec.key, memory(target.main.pid)?.rssMiB ?? null]));

    const cells = targets.flatMap(({ spec, target }) => spec.ops.map((op) => ({ spec, target, op })));
    const estimate = cells.length * (settings.warmupSeconds + settings.rounds * settings.durationSeconds + (settings.rounds + 1) * 0.6);
    log(`${cells.length} cells, ${settings.rounds} round(s) of ${settings.durationSeconds} s: about ${Math.ceil(estimate / 60)} min`);
    for (const cell of cells) {
      await drive(pinning.load, { ...driveSpec(cell.target, cell.op), durationSeconds: settings.warmupSeconds });
    }
    const results = new Map<string, DriveResult[]>();
    for (let round = 0; round < settings.rounds; round++) {
      // Alternate the order so no target always runs first (or last) after a given neighbour.
      const order = round % 2 === 0 ? cells : [...cells].reverse();
      for (const cell of order) {
        const cpuBefore = cpuSeconds(cell.target.main.pid);
        const result = await drive(pinning.load, driveSpec(cell.target, cell.op));
        const cpuAfter = cpuSeconds(cell.target.main.pid);
        result.cpuUsPerAnswer = cpuBefore === null || cpuAfter === null || result.expected === 0 ? NaN : ((cpuAfter - cpuBefore) / result.expected) * 1e6;
        const key = `${cell.spec.key}/${cell.op}`;
        results.set(key, [...(results.get(key) ?? []), result]);
        log(`round ${round + 1}: ${key} ${result.rps.toFixed(0)} req/s p50 ${result.p50.toFixed(2)} p99 ${result.p99.toFixed(2)} ms${result.unexpected + result.errors > 0 ? ` (${result.unexpected} unexpected, ${result.errors} errors)` : ""}`);
      }
    }

    const memories = new Map(targets.map(({ spec, target }) => [spec.key, memory(target.main.pid)]));
    const memoryRows: MemoryRow[] = targets.map(({ spec }) => ({
      target: spec.key,
      label: spec.label,
      startMiB: startMemory.get(spec.key) ?? null,
      peakMiB: memories.get(spec.key)?.peakMiB ?? null,
    }));
    const loadAfter = os.loadavg()[0]!;
    const notes: string[] = postgresNote === null ? [] : [postgresNote];
    for (const target of running) for (const child of target.processes) await stop(child);
    const authChecks = await readFile(path.join(work, "auth-checks.json"), "utf8").catch(() => null);
    if (authChecks !== null) {
      const checks = (JSON.parse(authChecks) as { checks: number }).checks;
      notes.push(`external auth service answered ${checks} token checks in the whole run (the verifier's 10 s answer cache served the rest)`);
    }
    if (targets.some(({ spec }) => spec.key.startsWith("prism"))) {
      notes.push("Prism serves plain HTTP (no TLS) and answers the contract's example, not the bench agents' bytes; it only checks that X-Auth-Token is present");
    }
    const cellResults: CellResult[] = cells.map(({ spec, op }) => {
      const rounds = results.get(`${spec.key}/${op}`) ?? [];
      return {
        target: spec.key,
        label: spec.label,
        op,
        rps: median(rounds.map((r) => r.rps)),
        p50: median(rounds.map((r) => r.p50)),
        p99: median(rounds.map((r) => r.p99)),
        rounds: rounds.map((r) => Math.round(r.rps)),
        unexpected: rounds.reduce((sum, r) => sum + r.unexpected, 0),
        unexpectedStatuses: rounds.reduce<Record<string, number>>((all, r) => {
          for (const [status, n] of Object.entries(r.unexpectedStatuses)) all[status] = (all[status] ?? 0) + n;
          return all;
        }, {}),
        errors: rounds.reduce((sum, r) => sum + r.errors + r.timeouts, 0),
        peakRssMiB: memories.get(spec.key)?.peakMiB ?? null,
        cpuUsPerAnswer: median(rounds.map((r) => r.cpuUsPerAnswer ?? NaN)),
      };
    });

    const info: RunInfo = {
      date: started.toISOString(),
      command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`,
      cpu: os.cpus()[0]?.model ?? "unknown",
      cores: os.availableParallelism(),
      node: process.version,
      pinning: pinning.target === null ? "none (taskset unavailable or a single core)" : `targets on core ${pinning.target}, autocannon on core ${pinning.load} (taskset)`,
      ...settings,
      serverStdout,
      coldStartRuns,
      pgliteAloneMemory,
      memory: memoryRows,
      loadAverage: [loadBefore, loadAfter],
      notes,
    };
    process.stdout.write(report(info, cellResults));
    failed = false;
    return { info, cells: cellResults };
  } finally {
    for (const target of running) for (const child of target.processes) await stop(child);
    if (dropDatabase) await dropDatabase().catch((err: Error) => log(`could not drop the bench database: ${err.message}`));
    await published?.remove();
    // On failure the targets' stderr logs stay for a look.
    if (failed) log(`logs kept in ${work}`);
    else await rm(work, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const results: Record<string, unknown> = {};
  if (!flags["growth-only"]) results.main = await mainTable();
  if (!flags["skip-growth"]) {
    const growth = await runGrowth({
      repo,
      sizes: sizes(flags.sizes),
      postgresUrl,
      connections: settings.connections,
      durationSeconds: settings.durationSeconds,
      warmupSeconds: settings.warmupSeconds,
      rounds: settings.rounds,
      log,
    });
    process.stdout.write("\n" + growthReport(growth));
    results.growth = growth;
  }
  if (flags.json) await writeFile(flags.json, JSON.stringify(results, null, 2) + "\n");
}

function sizes(raw: string | undefined): number[] {
  if (raw === undefined) return [...GROWTH_SIZES];
  const list = raw.split(",").map((item) => Number(item.trim()));
  if (list.some((n) => !Number.isInteger(n) || n < HOT_AGENT_ID)) throw new Error(`--sizes must be agent counts of at least ${HOT_AGENT_ID}, got ${raw}`);
  return list;
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
});
