// Child processes, readiness and memory for the bench runner (free ports come from devkit/ports.ts).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { openSync, readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import path from "node:path";
import { poll } from "../devkit/poll.js";
import { run } from "../devkit/run.js";
import type { DriveResult, DriveSpec } from "./drive.js";

/** Whether `taskset` can pin processes to cores here (Linux util-linux). */
export function tasksetWorks(): boolean {
  const probe = spawnSync("taskset", ["-c", "0", "true"], { stdio: "ignore" });
  return probe.status === 0;
}

export interface Pinning {
  /** Core of the system under test, or null when nothing is pinned. */
  target: number | null;
  /** Core of the load generator. */
  load: number | null;
}

/** Server on core 0 and load generator on core 1 when the machine has two cores and taskset; else unpinned. */
export function choosePinning(cores: number): Pinning {
  if (cores < 2 || !tasksetWorks()) return { target: null, load: null };
  return { target: 0, load: 1 };
}

export interface SpawnOptions {
  core: number | null;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** File that receives stdout; "ignore" for /dev/null, "pipe" to read it. */
  stdout: string;
  /** File that receives stderr; "pipe" to read it. */
  stderr: string;
}

/** `command args` as run on `core` (taskset execs it, so the pid is the program's own), or as is when no core is given. */
function pinned(command: string, args: string[], core: number | null): [string, string[]] {
  return core === null ? [command, args] : ["taskset", ["-c", String(core), command, ...args]];
}

/**
 * `env` without NODE_EXTRA_CA_CERTS. Where it is set (some sandboxes and
 * corporate machines set it), Node 20 reads that file and builds its store
 * of trusted CAs as every process starts, a cost a deployment without it
 * does not pay: it would add the same milliseconds to the server's cold
 * start and to PGlite alone's, flattering their ratio.
 */
function withoutExtraCaCerts(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { NODE_EXTRA_CA_CERTS: _ignored, ...rest } = env;
  return rest;
}

/** Starts `command args` pinned to one core. */
export function spawnOn(command: string, args: string[], options: SpawnOptions): ChildProcess {
  const file = (target: string) => (target === "ignore" || target === "pipe" ? target : openSync(target, "a"));
  const [cmd, argv] = pinned(command, args, options.core);
  return spawn(cmd, argv, {
    env: withoutExtraCaCerts(options.env ?? process.env),
    cwd: options.cwd,
    stdio: ["ignore", file(options.stdout), file(options.stderr)],
  });
}

/** Runs a child to completion, pinned to `core`, and returns its stdout; rejects with its stderr when it fails. */
export async function runToEnd(command: string, args: string[], options: Omit<SpawnOptions, "stdout" | "stderr">): Promise<string> {
  const [cmd, argv] = pinned(command, args, options.core);
  const result = await run(cmd, argv, { cwd: options.cwd, env: withoutExtraCaCerts(options.env ?? process.env) });
  if (result.code !== 0) throw new Error(`${command} ${args.slice(0, 3).join(" ")} exited ${result.code}: ${result.stderr.trim().slice(-2000)}`);
  return result.stdout;
}

export interface Answer {
  status: number;
  body: string;
}

/**
 * One request with a fresh connection. HTTPS requests trust `ca` only and
 * verify the certificate and host name, so a target that serves the wrong
 * certificate fails here before any load is sent.
 */
export function request(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; ca?: string; timeoutMs?: number } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const common = { method: options.method ?? "GET", headers: options.headers ?? {}, agent: false as const, timeout: options.timeoutMs ?? 5000 };
    const req =
      target.protocol === "https:"
        ? https.request(target, { ...common, ca: options.ca, rejectUnauthorized: true })
        : http.request(target, common);
    req.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`timed out: ${url}`)));
    req.on("error", reject);
    req.end(options.body);
  });
}

/** Polls `url` until it answers `status`; resolves with the milliseconds waited. */
export async function waitFor(
  url: string,
  options: { status: number; headers?: Record<string, string>; ca?: string; timeoutMs: number; intervalMs?: number; child?: ChildProcess },
): Promise<number> {
  const { waitedMs } = await poll(
    async () => {
      const answer = await request(url, { headers: options.headers, ca: options.ca, timeoutMs: 2000 });
      if (answer.status !== options.status) throw new Error(`status ${answer.status}: ${answer.body.slice(0, 200)}`);
      return answer;
    },
    {
      what: url,
      timeoutMs: options.timeoutMs,
      intervalMs: options.intervalMs,
      abortIf: () => (options.child && options.child.exitCode !== null ? `the process exited (${options.child.exitCode}) before answering` : null),
    },
  );
  return waitedMs;
}

/** Peak and current resident memory of a live process, in MiB, from /proc (Linux); null elsewhere. */
export function memory(pid: number | undefined): { peakMiB: number; rssMiB: number } | null {
  if (pid === undefined) return null;
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
    return { peakMiB: kib("VmHWM") / 1024, rssMiB: kib("VmRSS") / 1024 };
  } catch {
    return null;
  }
}

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ, 100 on Linux). */
const CLOCK_TICKS = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout?.trim()) || 100;

/**
 * CPU time a live process has used so far, user and system, in seconds
 * (/proc, Linux); null elsewhere. Unlike req/s, CPU per answer hardly moves
 * when other work shares the machine: it compares code, not load.
 */
export function cpuSeconds(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    // The fields after the command name, which is in parentheses and may contain spaces.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "").split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
export function stop(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill("SIGKILL"), graceMs);
    child.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/** One autocannon run (bench/drive.ts) in its own process, pinned to `core`; its JSON result. */
export async function runDrive(repo: string, core: number | null, spec: DriveSpec): Promise<DriveResult> {
  const out = await runToEnd(process.execPath, ["--import", "tsx", path.join(repo, "bench", "drive.ts"), JSON.stringify(spec)], {
    core,
    cwd: repo,
  });
  return JSON.parse(out.trim().split("\n").pop()!) as DriveResult;
}
