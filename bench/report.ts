// The printed result: one row per target and operation, then the issue's
// targets with met/missed, as Markdown (readable in a terminal, pasted into
// docs/performance.md as is).
import { OPERATIONS, type OperationName } from "./fixtures.js";
import { median } from "./stats.js";

export interface CellResult {
  target: string;
  label: string;
  op: OperationName;
  /** Medians over the rounds. */
  rps: number;
  p50: number;
  p99: number;
  /** req/s of each round, in run order. */
  rounds: number[];
  unexpected: number;
  unexpectedStatuses: Record<string, number>;
  errors: number;
  peakRssMiB: number | null;
  /** Median over the rounds of the main process's CPU time per expected answer, in µs. */
  cpuUsPerAnswer: number;
}

/** One target's resident memory: idle after its first answers, and the peak over the whole run. */
export interface MemoryRow {
  target: string;
  label: string;
  startMiB: number | null;
  peakMiB: number | null;
}

export interface ColdStartRun {
  /** "one core (core 0)" or "every core (2, unpinned)". */
  cores: string;
  serverMs: number[];
  /** The start that wrote the code cache, before `serverMs` (null: the data directory had one). */
  firstMs: number | null;
  /** PGlite alone on the same data directory (bench/targets/pglite-alone.js). */
  pgliteMs: number[];
}

export interface RunInfo {
  date: string;
  command: string;
  cpu: string;
  cores: number;
  node: string;
  pinning: string;
  rounds: number;
  durationSeconds: number;
  warmupSeconds: number;
  connections: number;
  coldStarts: number;
  /** Where the servers' log went: /dev/null, or a pipe the runner read. */
  serverStdout: "null" | "pipe";
  /**
   * The cold starts, the server's and PGlite alone's in turns: on the targets'
   * one core, and on every core (unpinned), where the server opens its
   * database in a thread of its own beside the rest of its start.
   */
  coldStartRuns: ColdStartRun[];
  /** PGlite alone's resident memory once it answered its query. */
  pgliteAloneMemory: { rssMiB: number; peakMiB: number } | null;
  memory: MemoryRow[];
  /** 1-minute load average when the run started and when the load ended: other work on the machine skews every figure. */
  loadAverage: [number, number];
  notes: string[];
}

const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : "–");
const ratio = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0 ? NaN : a / b;

export function report(info: RunInfo, cells: CellResult[]): string {
  const find = (target: string, op: OperationName) => cells.find((c) => c.target === target && c.op === op);
  const lines: string[] = [];
  lines.push(
    `Run ${info.date} · ${info.command}`,
    `Machine: ${info.cores} cores, ${info.cpu}, Node ${info.node}; pinning: ${info.pinning}; 1-min load average ${fixed(info.loadAverage[0], 1)} at start, ${fixed(info.loadAverage[1], 1)} at the end`,
    `Load: autocannon, ${info.connections} connections, keep-alive, no pipelining; ${info.warmupSeconds} s warm-up per cell, then ${info.rounds} round(s) of ${info.durationSeconds} s, order alternating; medians.`,
    `Servers: the shipped bundle (dist/bin/agentd.js), rate limit DISABLED (AGENTD_RATE_LIMIT=0), log level info (default) with stdout ${info.serverStdout === "pipe" ? "into a pipe the runner reads and discards" : "to /dev/null"}, TLS on 127.0.0.1.`,
    "",
    "| target | operation | req/s | p50 ms | p99 ms | × limit | × framework | peak RSS MiB | CPU µs/answer | req/s per round | notes |",
    "|---|---|--:|--:|--:|--:|--:|--:|--:|---|---|",
  );
  for (const cell of cells) {
    const notes: string[] = [];
    if (cell.unexpected > 0) notes.push(`${cell.unexpected} unexpected: ${JSON.stringify(cell.unexpectedStatuses)}`);
    if (cell.errors > 0) notes.push(`${cell.errors} errors/time-outs`);
    lines.push(
      `| ${cell.label} | ${OPERATIONS[cell.op].label} | ${fixed(cell.rps, 0)} | ${fixed(cell.p50, 2)} | ${fixed(cell.p99, 2)} | ${fixed(ratio(cell.rps, find("limit", cell.op)?.rps), 2)} | ${fixed(ratio(cell.rps, find("framework", cell.op)?.rps), 2)} | ${cell.peakRssMiB === null ? "–" : fixed(cell.peakRssMiB, 0)} | ${fixed(cell.cpuUsPerAnswer, 0)} | ${cell.rounds.join(", ")} | ${notes.join("; ")} |`,
    );
  }
  const coldRatios = info.coldStartRuns.map((run) => ({ run, ratio: ratio(median(run.serverMs), median(run.pgliteMs)) }));
  for (const { run, ratio: r } of coldRatios) {
    lines.push(
      "",
      `Cold start on ${run.cores} (process spawn to the first answer, existing PGlite data dir and code cache, in turns): server median ${fixed(median(run.serverMs), 0)} ms of ${run.serverMs.length} (${run.serverMs.map((t) => t.toFixed(0)).join(", ")} ms); PGlite alone median ${fixed(median(run.pgliteMs), 0)} ms (${run.pgliteMs.map((t) => t.toFixed(0)).join(", ")} ms): ${fixed(r, 2)}× PGlite alone.` +
        (run.firstMs === null ? "" : ` The first start before them, which compiled the server and wrote the code cache: ${fixed(run.firstMs, 0)} ms.`),
    );
  }

  const published = cells.filter((c) => c.target === "framework-published");
  if (published.length > 0) {
    lines.push("", "| framework ceiling | operation | validator as published req/s | patched (as shipped) req/s | patched ÷ published | CPU µs/answer published → patched |", "|---|---|--:|--:|--:|--:|");
    for (const before of published) {
      const after = find("framework", before.op);
      lines.push(
        `| Express 5 + openapi-validator | ${OPERATIONS[before.op].label} | ${fixed(before.rps, 0)} | ${fixed(after?.rps ?? NaN, 0)} | ${fixed(ratio(after?.rps, before.rps), 2)} | ${fixed(before.cpuUsPerAnswer, 0)} → ${fixed(after?.cpuUsPerAnswer ?? NaN, 0)} |`,
      );
    }
  }

  lines.push("", "| target | RSS after start MiB | peak RSS under the bench MiB |", "|---|--:|--:|");
  for (const row of info.memory) lines.push(`| ${row.label} | ${row.startMiB === null ? "–" : fixed(row.startMiB, 0)} | ${row.peakMiB === null ? "–" : fixed(row.peakMiB, 0)} |`);
  if (info.pgliteAloneMemory !== null) {
    lines.push(`| PGlite alone, opened with the server's settings, after one query | ${fixed(info.pgliteAloneMemory.rssMiB, 0)} | ${fixed(info.pgliteAloneMemory.peakMiB, 0)} |`);
  }

  lines.push("", "| goal (issue 5) | measured | verdict |", "|---|---|---|");
  const verdict = (ok: boolean | null) => (ok === null ? "not measured" : ok ? "met" : "MISSED");
  const check = (goal: string, value: number, text: string, ok: (v: number) => boolean) =>
    lines.push(`| ${goal} | ${Number.isFinite(value) ? text : "–"} | ${verdict(Number.isFinite(value) ? ok(value) : null)} |`);
  for (const op of ["list", "byId", "byNumber"] as const) {
    const server = find("server", op);
    const r = ratio(server?.rps, find("framework", op)?.rps);
    check(`server ${OPERATIONS[op].label} ≥ 0.9× framework ceiling`, r, `${fixed(r, 2)}×`, (v) => v >= 0.9);
    check(`server ${OPERATIONS[op].label} p99 ≤ 10 ms`, server?.p99 ?? NaN, `${fixed(server?.p99 ?? NaN, 2)} ms`, (v) => v <= 10);
  }
  for (const target of ["server", "server-pg"]) {
    const r = ratio(find(target, "pause")?.rps, find(target, "byNumber")?.rps);
    check(`${target}: pause ≥ 0.5× its GET by number`, r, `${fixed(r, 2)}×`, (v) => v >= 0.5);
  }
  const prism = ratio(find("server", "byNumber")?.rps, find("prism", "byNumber")?.rps);
  check("server GET by number ≥ 1.5× Prism (default logging)", prism, `${fixed(prism, 2)}×`, (v) => v >= 1.5);
  const prismWarn = ratio(find("server", "byNumber")?.rps, find("prism-warn", "byNumber")?.rps);
  check("server GET by number ≥ 1.0× Prism (-v warn)", prismWarn, `${fixed(prismWarn, 2)}×`, (v) => v >= 1.0);
  const metricsCost = ratio(find("server", "byNumber")?.rps, find("server-nometrics", "byNumber")?.rps);
  check("server GET by number, metrics on ≥ 0.95× metrics off (issue 12)", metricsCost, `${fixed(metricsCost, 2)}×`, (v) => v >= 0.95);
  for (const { run, ratio: r } of coldRatios) check(`cold start on ${run.cores} ≤ 2× PGlite alone, same run (issue 24)`, r, `${fixed(r, 2)}×`, (v) => v <= 2);
  const rss = find("server", "byNumber")?.peakRssMiB ?? NaN;
  check("server peak RSS ≤ 200 MB under load", rss, `${fixed(rss, 0)} MiB`, (v) => v <= 200);
  const stack = ratio(find("framework", "byNumber")?.rps, find("limit", "byNumber")?.rps);
  lines.push("", `Context: framework ceiling / limit on GET by number = ${fixed(stack, 2)}× (the issue expects 0.15–0.25× for Express + validation).`);
  for (const note of info.notes) lines.push(`Note: ${note}`);
  return lines.join("\n") + "\n";
}
