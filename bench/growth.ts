// The growth table (issue 11): the same server at 100, 1,000, 10,000 and
// 100,000 agents, on PGlite and on PostgreSQL. At each size:
// - `agentd import` of the fleet into an existing, empty database (the
//   whole CLI process, timed from outside), and, on PostgreSQL, `psql \copy`
//   of the same rows into the same table of another empty database, taking
//   turns for --rounds rounds (medians);
// - GET /agents, GET by number and pause req/s against the server, and GET
//   /agents against the limit (bare node:https sending the same list bytes);
// - the server's peak RSS (VmHWM) after its cells.
// Each size's processes are stopped before the next size starts.
import { spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { DriveResult, DriveSpec } from "./drive.js";
import { createDatabase } from "./database.js";
import { BENCH_TOKEN, OPERATIONS, PAUSE_BODY, benchAgents, writeCertificate, type OperationName } from "./fixtures.js";
import { choosePinning, memory, request, runDrive, runToEnd, stop, waitFor } from "./processes.js";
import { median } from "./stats.js";
import { agentdBin, limitFor, server, serverEnv, type BenchContext, type RunningTarget } from "./systems-under-test.js";
import type { AgentRecord } from "../server/store/agent-store.js";

export const GROWTH_SIZES = [100, 1_000, 10_000, 100_000] as const;
export const GROWTH_OPS = ["list", "byNumber", "pause"] as const satisfies readonly OperationName[];
export type GrowthOp = (typeof GROWTH_OPS)[number];
export type GrowthStore = "pglite" | "postgres";

export interface GrowthOptions {
  repo: string;
  sizes: number[];
  postgresUrl: string;
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
  rounds: number;
  log(message: string): void;
}

export interface GrowthServerResult {
  agents: number;
  store: GrowthStore;
  /** Median req/s over the rounds, per operation. */
  rps: Record<GrowthOp, number>;
  rounds: Record<GrowthOp, number[]>;
  /** Answers with another status, errors and time-outs, over all rounds. */
  failures: Record<GrowthOp, number>;
  /** `agentd import`, milliseconds: the median of `settings.rounds` imports, each into an empty database. */
  importMs: number;
  peakRssMiB: number | null;
}

export interface GrowthResult {
  date: string;
  settings: Omit<GrowthOptions, "repo" | "log" | "postgresUrl">;
  servers: GrowthServerResult[];
  /** GET /agents from the limit, median req/s, by agent count. */
  limit: Record<number, number>;
  /** Connections of the GET /agents cells, by agent count (the other cells use `settings.connections`). */
  listConnections: Record<number, number>;
  /** `psql \copy` of the same rows, milliseconds (median of the rounds), by agent count (PostgreSQL only). */
  copyMs: Record<number, number>;
  notes: string[];
}

/** The rows as `psql \copy … (FORMAT csv)` reads them: NULL is an unquoted empty field. */
function toCsv(agents: readonly AgentRecord[]): string {
  const text = (value: string | null) => (value === null ? "" : `"${value.replaceAll('"', '""')}"`);
  const bool = (value: boolean) => (value ? "t" : "f");
  return (
    agents
      .map((a) =>
        [a.id, text(a.number), text(a.extension), text(a.context), bool(a.logged), bool(a.paused), text(a.paused_reason), text(a.state_interface)].join(","),
      )
      .join("\n") + "\n"
  );
}

/** About the size of one agent in GET /agents, in bytes (19.8 KB for the bench's first 100). */
const LIST_BYTES_PER_AGENT = 200;

const COLUMNS = "id, number, extension, context, logged, paused, paused_reason, state_interface";

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

function psqlAvailable(): boolean {
  return spawnSync("psql", ["--version"], { stdio: "ignore" }).status === 0;
}

export async function runGrowth(options: GrowthOptions): Promise<GrowthResult> {
  const log = (line: string): void => options.log(line);
  const started = new Date();
  const pinning = choosePinning(os.availableParallelism());
  const work = await mkdtemp(path.join(os.tmpdir(), "agentd-growth-"));
  const cert = await writeCertificate(work);
  const ctx: BenchContext = { repo: options.repo, work, cert, core: pinning.target, serverNodeFlags: [], serverStdout: "null" };
  const cli = agentdBin(options.repo);
  const agentd = (args: string[], settings: Record<string, string>) =>
    runToEnd(process.execPath, [cli, ...args], { core: ctx.core, cwd: work, env: serverEnv(ctx, settings) });
  const result: GrowthResult = {
    date: started.toISOString(),
    settings: {
      sizes: options.sizes,
      connections: options.connections,
      durationSeconds: options.durationSeconds,
      warmupSeconds: options.warmupSeconds,
      rounds: options.rounds,
    },
    servers: [],
    limit: {},
    listConnections: {},
    copyMs: {},
    notes: [],
  };
  const withPsql = psqlAvailable();
  if (!withPsql) result.notes.push("psql not found: no COPY baseline");

  // A list of 100,000 agents is 20 MB. With 32 connections every answer
  // would be in flight at once (640 MB of TLS records queued, none complete
  // within a short cell), which measures buffering, not the server. List
  // cells therefore keep about 64 MB in flight: 32 connections up to 10,000
  // agents, 3 at 100,000; the limit gets the same count as the servers.
  const listConnections = (size: number) =>
    Math.max(1, Math.min(options.connections, Math.floor((64 * 2 ** 20) / (size * LIST_BYTES_PER_AGENT))));
  const drive = async (target: RunningTarget, op: GrowthOp, seconds: number, size: number): Promise<DriveResult> => {
    const operation = OPERATIONS[op];
    const spec: DriveSpec = {
      url: target.base + operation.path,
      method: operation.method,
      headers: { "x-auth-token": BENCH_TOKEN, ...(op === "pause" ? { "content-type": "application/json" } : {}) },
      ...(op === "pause" ? { body: PAUSE_BODY } : {}),
      connections: op === "list" ? listConnections(size) : options.connections,
      durationSeconds: seconds,
      expectStatus: op === "pause" ? 204 : 200,
    };
    return runDrive(options.repo, pinning.load, spec);
  };
  const measure = async (target: RunningTarget, op: GrowthOp, size: number) => {
    await drive(target, op, options.warmupSeconds, size);
    const rounds: DriveResult[] = [];
    for (let round = 0; round < options.rounds; round++) rounds.push(await drive(target, op, options.durationSeconds, size));
    return {
      rps: median(rounds.map((r) => r.rps)),
      rounds: rounds.map((r) => Math.round(r.rps)),
      failures: rounds.reduce((sum, r) => sum + r.unexpected + r.errors + r.timeouts, 0),
    };
  };

  const running: RunningTarget[] = [];
  const drops: (() => Promise<void>)[] = [];
  try {
    for (const size of options.sizes) {
      const agents = benchAgents(size);
      const json = path.join(work, `agents-${size}.json`);
      const csv = path.join(work, `agents-${size}.csv`);
      await writeFile(json, JSON.stringify(agents));
      await writeFile(csv, toCsv(agents));

      // Each database is created and migrated first (a token is the smallest
      // write that does it), so the timed import is the import alone.
      const stores: { store: GrowthStore; settings: Record<string, string> }[] = [];
      const pgliteDir = path.join(work, `pglite-${size}`);
      stores.push({ store: "pglite", settings: { AGENTD_DATA_DIR: pgliteDir } });
      const database = await createDatabase(options.postgresUrl);
      if (database.url === null) {
        if (size === options.sizes[0]) result.notes.push(`PostgreSQL not run: ${database.reason}`);
      } else {
        drops.push(() => database.drop());
        stores.push({ store: "postgres", settings: { AGENTD_DATA_DIR: path.join(work, `pg-${size}`), AGENTD_DATABASE_URL: database.url } });
      }
      const copyOnce = async (): Promise<number | null> => {
        const copyDb = await createDatabase(options.postgresUrl);
        if (copyDb.url === null) return null;
        try {
          await agentd(["token", "create", "--acl", "agentd.#"], { AGENTD_DATA_DIR: path.join(work, `copy-${size}`), AGENTD_DATABASE_URL: copyDb.url });
          const url = copyDb.url;
          return await timed(() =>
            runToEnd("psql", [url, "-q", "-v", "ON_ERROR_STOP=1", "-c", `\\copy agents (${COLUMNS}) FROM '${csv}' WITH (FORMAT csv)`], { core: ctx.core, cwd: work }),
          );
        } finally {
          await copyDb.drop();
        }
      };
      const importOnce = async (settings: Record<string, string>): Promise<number> => {
        await agentd(["token", "create", "--acl", "agentd.#"], settings);
        return timed(() => agentd(["import", json], settings));
      };
      // Into a database of its own, dropped afterwards: the rounds before the last.
      const importScratch = async (store: GrowthStore): Promise<number | null> => {
        if (store === "pglite") {
          const dir = path.join(work, `pglite-scratch-${size}`);
          try {
            return await importOnce({ AGENTD_DATA_DIR: dir });
          } finally {
            await rm(dir, { recursive: true, force: true });
          }
        }
        const scratch = await createDatabase(options.postgresUrl);
        if (scratch.url === null) return null;
        try {
          return await importOnce({ AGENTD_DATA_DIR: path.join(work, `pg-scratch-${size}`), AGENTD_DATABASE_URL: scratch.url });
        } finally {
          await scratch.drop();
        }
      };
      // The machine is shared and its speed drifts: import and COPY take
      // turns, round by round, and each figure is the median of its rounds.
      // The last round imports into the database the server then reads.
      const importRounds = new Map<GrowthStore, number[]>(stores.map(({ store }) => [store, []]));
      const copyRounds: number[] = [];
      for (let round = 0; round < options.rounds; round++) {
        const last = round === options.rounds - 1;
        if (withPsql && database.url !== null) {
          const ms = await copyOnce();
          if (ms !== null) copyRounds.push(ms);
        }
        for (const { store, settings } of stores) {
          const ms = last ? await importOnce(settings) : await importScratch(store);
          if (ms !== null) importRounds.get(store)!.push(ms);
        }
      }
      if (copyRounds.length > 0) result.copyMs[size] = median(copyRounds);
      const importMs = new Map<GrowthStore, number>([...importRounds].map(([store, rounds]) => [store, median(rounds)]));
      for (const { store } of stores) {
        const copy = store === "postgres" && result.copyMs[size] !== undefined ? `, psql \\copy ${result.copyMs[size].toFixed(0)} ms (rounds ${copyRounds.map((ms) => ms.toFixed(0)).join(", ")})` : "";
        log(`growth ${size}: ${store} import ${importMs.get(store)!.toFixed(0)} ms (rounds ${importRounds.get(store)!.map((ms) => ms.toFixed(0)).join(", ")})${copy}`);
      }

      const limit = await limitFor(ctx, size);
      running.push(limit);
      const servers: { store: GrowthStore; target: RunningTarget }[] = [];
      for (const { store, settings } of stores) {
        const target = await server(ctx, settings, `growth-${store}-${size}.log`);
        running.push(target);
        servers.push({ store, target });
      }
      // Every server sends the limit's bytes before any load.
      let reference: string | undefined;
      for (const target of [limit, ...servers.map((s) => s.target)]) {
        await waitFor(target.base + OPERATIONS.byNumber.path, { status: 200, headers: { "x-auth-token": BENCH_TOKEN }, ca: cert.cert, timeoutMs: 120_000, child: target.main });
        const list = await request(target.base + OPERATIONS.list.path, { headers: { "x-auth-token": BENCH_TOKEN }, ca: cert.cert, timeoutMs: 120_000 });
        if (list.status !== 200) throw new Error(`growth ${size}: GET /agents answered ${list.status}`);
        if (reference === undefined) reference = list.body;
        else if (list.body !== reference) throw new Error(`growth ${size}: a server's list differs from the limit's`);
      }

      result.listConnections[size] = listConnections(size);
      result.limit[size] = (await measure(limit, "list", size)).rps;
      log(`growth ${size}: limit list ${result.limit[size].toFixed(0)} req/s`);
      for (const { store, target } of servers) {
        const cells = {} as Record<GrowthOp, Awaited<ReturnType<typeof measure>>>;
        for (const op of GROWTH_OPS) {
          cells[op] = await measure(target, op, size);
          log(`growth ${size}: ${store} ${op} ${cells[op].rps.toFixed(0)} req/s${cells[op].failures > 0 ? ` (${cells[op].failures} failures)` : ""}`);
        }
        result.servers.push({
          agents: size,
          store,
          rps: { list: cells.list.rps, byNumber: cells.byNumber.rps, pause: cells.pause.rps },
          rounds: { list: cells.list.rounds, byNumber: cells.byNumber.rounds, pause: cells.pause.rounds },
          failures: { list: cells.list.failures, byNumber: cells.byNumber.failures, pause: cells.pause.failures },
          importMs: importMs.get(store)!,
          peakRssMiB: memory(target.main.pid)?.peakMiB ?? null,
        });
      }
      for (const target of running.splice(0)) for (const child of target.processes) await stop(child);
      for (const drop of drops.splice(0)) await drop();
      await rm(pgliteDir, { recursive: true, force: true });
    }
  } finally {
    for (const target of running) for (const child of target.processes) await stop(child);
    for (const drop of drops) await drop().catch((err: Error) => log(`could not drop a bench database: ${err.message}`));
    await rm(work, { recursive: true, force: true });
  }
  return result;
}
