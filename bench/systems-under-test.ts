// The systems under test (the baselines of bench/targets/, the server as
// shipped, Prism) and how to start each one as its own process.
import type { ChildProcess } from "node:child_process";
import path from "node:path";
import type { CertFiles, OperationName } from "./fixtures.js";
import { BENCH_TOKEN, ORIGIN_UUID } from "./fixtures.js";
import { BASE_PATH } from "../server/contract.js";
import { envWithoutAgentd } from "../devkit/child-env.js";
import { freePort } from "../devkit/ports.js";
import { spawnOn } from "./processes.js";

export interface BenchContext {
  repo: string;
  work: string;
  cert: CertFiles;
  /** Core for systems under test (null: unpinned). */
  core: number | null;
  /** Extra node flags for the shipped server (e.g. --cpu-prof). */
  serverNodeFlags: string[];
  /** Where the shipped server's log goes: /dev/null, or a pipe this process reads and discards (as a log shipper would). */
  serverStdout: "null" | "pipe";
  /** express-openapi-validator as published, for the framework ceiling without our patch (devkit/pristine-validator.ts). */
  publishedValidator?: string;
}

/** The shipped `agentd` command: the bundle the package's bin runs (scripts/bundle.ts). */
export function agentdBin(repo: string): string {
  return path.join(repo, "dist", "bin", "agentd.js");
}

export interface RunningTarget {
  /** URL the operations' paths are appended to. */
  base: string;
  https: boolean;
  /** The process whose memory is reported. */
  main: ChildProcess;
  /** Every process of the target, stopped in this order. */
  processes: ChildProcess[];
}

export interface TargetSpec {
  key: string;
  label: string;
  ops: readonly OperationName[];
  /** Compared byte for byte with the limit's bodies before the load (false for Prism: it serves the contract's examples). */
  samePayloads: boolean;
  start(ctx: BenchContext): Promise<RunningTarget>;
}

const ALL_OPS: readonly OperationName[] = ["list", "byId", "byNumber", "pause"];

function tsxTarget(
  ctx: BenchContext,
  file: string,
  port: number,
  log: string,
  stdout: string = "ignore",
  env: Record<string, string> = {},
): ChildProcess {
  return spawnOn(process.execPath, ["--import", "tsx", path.join(ctx.repo, "bench", "targets", file)], {
    core: ctx.core,
    cwd: ctx.repo,
    env: { ...process.env, BENCH_PORT: String(port), BENCH_CERT: ctx.cert.certPath, BENCH_KEY: ctx.cert.keyPath, ...env },
    stdout,
    stderr: path.join(ctx.work, log),
  });
}

/** The server's environment: inherited AGENTD_* variables are dropped so only the bench's settings apply. */
export function serverEnv(ctx: BenchContext, settings: Record<string, string>): NodeJS.ProcessEnv {
  return {
    ...envWithoutAgentd(),
    AGENTD_HOST: "127.0.0.1",
    AGENTD_TLS_CERT: ctx.cert.certPath,
    AGENTD_TLS_KEY: ctx.cert.keyPath,
    AGENTD_ORIGIN_UUID: ORIGIN_UUID,
    AGENTD_ADMIN_TOKEN: BENCH_TOKEN,
    // The run measures throughput, not the per-token limit (100/s by default).
    AGENTD_RATE_LIMIT: "0",
    // The operator listener (and so the metrics) on, as shipped; port 0 so runs never collide.
    AGENTD_OPS_PORT: "0",
    AGENTD_DRAIN_DELAY: "0",
    ...settings,
  };
}

/** `agentd serve` as shipped (the bundle), logging at its default level (info) to stdout: /dev/null, or a pipe read and discarded here. */
export function spawnServer(ctx: BenchContext, settings: Record<string, string>, log: string, nodeFlags: string[] = []): ChildProcess {
  const child = spawnOn(process.execPath, [...nodeFlags, agentdBin(ctx.repo), "serve"], {
    core: ctx.core,
    // Not the repository: its .env must not configure the bench servers.
    cwd: ctx.work,
    env: serverEnv(ctx, settings),
    stdout: ctx.serverStdout === "pipe" ? "pipe" : "ignore",
    stderr: path.join(ctx.work, log),
  });
  child.stdout?.resume();
  return child;
}

/** The limit (bare node:https) serving the bodies of `agents` bench agents, for the growth table. */
export async function limitFor(ctx: BenchContext, agents: number): Promise<RunningTarget> {
  const port = await freePort();
  const child = tsxTarget(ctx, "limit.ts", port, `limit-${agents}.log`, "ignore", { BENCH_AGENTS: String(agents) });
  return { base: `https://127.0.0.1:${port}/1.0`, https: true, main: child, processes: [child] };
}

/** `agentd serve` as shipped on a free port with these settings. */
export async function server(ctx: BenchContext, settings: Record<string, string>, log: string, nodeFlags: string[] = []): Promise<RunningTarget> {
  const port = await freePort();
  const child = spawnServer(ctx, { ...settings, AGENTD_PORT: String(port) }, log, nodeFlags);
  return { base: `https://127.0.0.1:${port}${BASE_PATH}`, https: true, main: child, processes: [child] };
}

async function prism(ctx: BenchContext, level: string | null, log: string): Promise<RunningTarget> {
  const port = await freePort();
  const bin = path.join(ctx.repo, "node_modules", "@stoplight", "prism-cli", "dist", "index.js");
  const args = [bin, "mock", path.join(ctx.repo, "openapi.yaml"), "--host", "127.0.0.1", "--port", String(port)];
  if (level !== null) args.push("-v", level);
  const child = spawnOn(process.execPath, args, { core: ctx.core, cwd: ctx.repo, stdout: "ignore", stderr: path.join(ctx.work, log) });
  // Prism serves the contract's paths from its root, without the base path, over plain HTTP.
  return { base: `http://127.0.0.1:${port}`, https: false, main: child, processes: [child] };
}

export interface TargetSetup {
  pgliteDir: string;
  /** The same agents again, for the metrics-off twin of "server" (targets run side by side). */
  noMetricsDir: string;
  externalDir: string;
  /** null when PostgreSQL is unavailable; the target is then reported as not run. */
  databaseUrl: string | null;
}

/** A baseline that serves the bench's bodies from memory: bench/targets/<file> on its own HTTPS port. */
function fromMemory(key: string, label: string, file: string, env: (ctx: BenchContext) => Record<string, string> = () => ({})): TargetSpec {
  return {
    key,
    label,
    ops: ALL_OPS,
    samePayloads: true,
    async start(ctx) {
      const port = await freePort();
      const child = tsxTarget(ctx, file, port, `${key}.log`, "ignore", env(ctx));
      return { base: `https://127.0.0.1:${port}${BASE_PATH}`, https: true, main: child, processes: [child] };
    },
  };
}

export function targetSpecs(setup: TargetSetup): TargetSpec[] {
  const specs: TargetSpec[] = [
    fromMemory("limit", "limit: bare node:https, bodies from memory", "limit.ts"),
    fromMemory("framework", "framework ceiling: Express 5 + openapi-validator (patched, as shipped), from memory", "framework.ts"),
    // The same with the validator as published: what the patch (patches/) changes.
    fromMemory("framework-published", "framework ceiling, validator as published (no patch)", "framework.ts", (ctx) => {
      if (ctx.publishedValidator === undefined) throw new Error("the framework-published target needs the published validator (BenchContext.publishedValidator)");
      return { BENCH_VALIDATOR: ctx.publishedValidator };
    }),
    {
      key: "server",
      label: "server as shipped: PGlite, embedded tokens, info logs",
      ops: ALL_OPS,
      samePayloads: true,
      start: (ctx) => server(ctx, { AGENTD_DATA_DIR: setup.pgliteDir }, "server.log", ctx.serverNodeFlags),
    },
    {
      // The same server with AGENTD_OPS_PORT=off: what counting the metrics costs.
      key: "server-nometrics",
      label: "server as shipped but metrics off (AGENTD_OPS_PORT=off)",
      ops: ["byNumber"],
      samePayloads: true,
      start: (ctx) => server(ctx, { AGENTD_DATA_DIR: setup.noMetricsDir, AGENTD_OPS_PORT: "off" }, "server-nometrics.log"),
    },
  ];
  if (setup.databaseUrl !== null) {
    const url = setup.databaseUrl;
    specs.push({
      key: "server-pg",
      label: "server on PostgreSQL, embedded tokens",
      ops: ALL_OPS,
      samePayloads: true,
      start: (ctx) => server(ctx, { AGENTD_DATA_DIR: path.join(ctx.work, "data-pg"), AGENTD_DATABASE_URL: url }, "server-pg.log"),
    });
  }
  specs.push(
    {
      key: "server-ext",
      label: "server, external auth verifier (cache warm), PGlite",
      ops: ["byNumber"],
      samePayloads: true,
      async start(ctx) {
        const authPort = await freePort();
        // It prints how many checks it answered when it stops: the verifier's cache should keep that tiny.
        const auth = tsxTarget(ctx, "auth-service.ts", authPort, "auth-service.log", path.join(ctx.work, "auth-checks.json"));
        const running = await server(ctx, { AGENTD_DATA_DIR: setup.externalDir, AGENTD_AUTH_URL: `http://127.0.0.1:${authPort}` }, "server-ext.log");
        // The server first, so it stops talking to the auth service before that goes away.
        return { ...running, processes: [running.main, auth] };
      },
    },
    {
      key: "prism",
      label: "Prism mock, default logging (HTTP)",
      ops: ["byNumber"],
      samePayloads: false,
      start: (ctx) => prism(ctx, null, "prism.log"),
    },
    {
      key: "prism-warn",
      label: "Prism mock, -v warn (HTTP)",
      ops: ["byNumber"],
      samePayloads: false,
      start: (ctx) => prism(ctx, "warn", "prism-warn.log"),
    },
  );
  return specs;
}
