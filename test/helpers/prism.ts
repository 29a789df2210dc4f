// Starts, on 127.0.0.1 and an ephemeral port, the stateless mock as users
// start it (`npm run mock`: the front door, and the real Prism CLI's mock
// behind it), or Prism's validating proxy (node_modules/.bin/prism) in
// front of a server.
//
//   const prism = await startPrism({ mode: "mock" });
//   await fetch(`${prism.url}/agents`, { headers: { "X-Auth-Token": "t" } });
//   await prism.stop();
//
// Base URL: Prism serves the contract's paths from the root of its own
// address (`http://127.0.0.1:<port>/agents`). The `/1.0` path of the
// contract's `servers` is NOT part of the mock's routes (`/1.0/agents` is a
// 404 NO_PATH_MATCHED_ERROR), so a front end points at `http://127.0.0.1:4010`
// for the mock and at `https://host:9493/1.0` for a real server.
//
// Proxy mode forwards to `upstream` + path, so `upstream` carries the base
// path: `https://127.0.0.1:<port>/1.0`. The server under test uses a
// self-signed certificate, which Prism's fetch refuses ("self-signed
// certificate"). Pass that certificate as `upstreamCa` (a PEM file path): it
// becomes NODE_EXTRA_CA_CERTS in the Prism child only, so Prism trusts that
// one certificate and still checks the host name. `insecureTls: true`
// instead sets NODE_TLS_REJECT_UNAUTHORIZED=0 in the child only (no check at
// all); prefer `upstreamCa`. Neither touches the test process's own TLS.
//
// Proxy mode validates the request before forwarding it: a request without
// `X-Auth-Token` never reaches the upstream and gets Prism's own 401
// problem+json (not the contract's example, unlike mock mode); with
// `errors: true` a response that breaks the contract becomes a Prism error.
import { spawn } from "node:child_process";
import path from "node:path";
import { envWithoutAgentd } from "../../devkit/child-env.js";
import { untilAnswering } from "../../devkit/poll.js";
import { freePort } from "../../devkit/ports.js";
import { repoRoot } from "../../devkit/root.js";
import { run } from "../../devkit/run.js";
import { contractPath } from "./contract.js";

export type PrismOptions =
  | {
      /** The stateless mock as users start it, `npm run mock` (the front door, Prism's mock behind it). */
      mode: "mock";
      dynamic?: boolean;
      /** A published release: `npm run mock -- --release <release>`. */
      release?: string;
    }
  | {
      mode: "proxy";
      /** Base URL of the real server, including its base path (e.g. `https://127.0.0.1:9493/1.0`). */
      upstream: string;
      /** With `--errors`, Prism answers a contract violation (request or response) with an error instead of passing it through. */
      errors?: boolean;
      /** PEM file of the upstream's (self-signed) certificate, trusted by the Prism child only. */
      upstreamCa?: string;
      /** Disable certificate checks in the Prism child only; prefer `upstreamCa`. */
      insecureTls?: boolean;
      spec?: string;
    };

export interface PrismHandle {
  /** `http://127.0.0.1:<port>`, without the contract's `/1.0` base path. */
  url: string;
  port: number;
  /** Process id of Prism, also the id of its process group. */
  pid: number;
  /** Stops Prism and every process it started; resolves once they are gone. Safe to call twice. */
  stop(): Promise<void>;
  /** Everything Prism wrote to stdout and stderr so far (its request log), for failure messages. */
  output(): string;
}

const PRISM_BIN = path.join(repoRoot, "node_modules", ".bin", "prism");
// A bound for a hang, not a speed: a start from the compiler's output
// took over a minute on a loaded CI machine running at half its usual speed.
const START_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 5_000;
const PORT_ATTEMPTS = 3;

export async function startPrism(options: PrismOptions, extraArgs: string[] = []): Promise<PrismHandle> {
  let lastError: unknown;
  // The free port can be taken between freePort() and Prism's bind; retry
  // with another one rather than fail the suite.
  for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
    const port = await freePort();
    try {
      return await startOn(port, options, extraArgs);
    } catch (error) {
      lastError = error;
      if (!(error instanceof PortInUse)) throw error;
    }
  }
  throw lastError;
}

class PortInUse extends Error {}

async function startOn(port: number, options: PrismOptions, extraArgs: string[]): Promise<PrismHandle> {
  const viaNpm = options.mode === "mock";
  const args =
    options.mode === "mock"
      ? ["run", "--silent", "mock", "--", ...(options.release === undefined ? [] : ["--release", options.release]), ...(options.dynamic ? ["--dynamic"] : [])]
      : ["proxy", options.spec ?? contractPath, options.upstream, ...(options.errors ? ["--errors"] : [])];
  args.push("--host", "127.0.0.1", "--port", String(port), ...extraArgs);

  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" };
  if (options.mode === "proxy") {
    if (options.upstreamCa !== undefined) env.NODE_EXTRA_CA_CERTS = options.upstreamCa;
    if (options.insecureTls) env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
  }

  // detached: Prism gets its own process group, so stop() can signal the
  // group and take any helper process (`--multiprocess` forks) with it.
  const child = spawn(viaNpm ? "npm" : PRISM_BIN, args, {
    cwd: repoRoot,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${PRISM_BIN}`);

  let log = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (log += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (log += chunk));

  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.once("exit", () => {
      exited = true;
      resolve();
    });
  });

  // If the test runner dies without calling stop(), do not leave Prism behind.
  const killOnExit = (): void => signalGroup(pid, "SIGKILL");
  process.once("exit", killOnExit);

  const stop = async (): Promise<void> => {
    process.removeListener("exit", killOnExit);
    if (!exited) signalGroup(pid, "SIGTERM");
    const stopped = await Promise.race([
      exit.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), STOP_TIMEOUT_MS).unref()),
    ]);
    // Prism ignoring SIGTERM, or a grandchild outliving it: finish the group.
    if (!stopped || groupAlive(pid)) signalGroup(pid, "SIGKILL");
    await exit;
  };

  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUntilAnswering(url, () => exited, () => log);
  } catch (error) {
    await stop();
    if (/EADDRINUSE/.test(log)) throw new PortInUse(`port ${port} in use`);
    throw error;
  }
  return { url, port, pid, stop, output: () => log };
}

// Any HTTP answer (even Prism's 404 for `/`) means Prism is serving.
async function waitUntilAnswering(url: string, hasExited: () => boolean, log: () => string): Promise<void> {
  try {
    await untilAnswering(`${url}/`, { what: `prism on ${url}`, timeoutMs: START_TIMEOUT_MS, abortIf: () => (hasExited() ? "exited before answering" : null) });
  } catch (error) {
    throw new Error(`${(error as Error).message}:\n${log()}`, { cause: error });
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    // ESRCH: the group is already gone, which is what we want.
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

/** Whether any process of the group `pid` still exists. */
/**
 * The script `npm run mock` runs, without npm in front, on port 0 and an
 * environment free of the caller's AGENTD_* settings: for the refusals,
 * which are the script's own and come before anything listens.
 */
export function runMockScript(args: string[], env: Record<string, string> = {}): ReturnType<typeof run> {
  return run(process.execPath, ["--import", "tsx", "scripts/mock.ts", "--port", "0", ...args], { cwd: repoRoot, env: { ...envWithoutAgentd(), ...env }, timeoutMs: 60_000 });
}

export function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}
