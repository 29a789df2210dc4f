// Runs `agentd serve` as users do, as a real child process of the bundled
// command the package installs (node dist/bin/agentd.js serve, package.json's
// bin; the test run's global setup builds dist/ once), waits for its
// start-up banner on stderr (`agentd is serving https://…`), and talks to it
// over HTTPS trusting only its own certificate. For crash tests:
// kill("SIGKILL") and start again on the same data directory or database.
//
//   const agentd = await spawnAgentd({ AGENTD_DATA_DIR: dir, AGENTD_ADMIN_TOKEN: token });
//   await agentd.call("POST", "/agents/by-number/1001/pause", { token, body: { reason: "x" } });
//   await agentd.kill("SIGKILL");
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { Agent } from "undici";
import { envWithoutAgentd } from "../../devkit/child-env.js";
import { repoRoot } from "../../devkit/root.js";
import { callHttps, type Answer, type CallOptions } from "./https.js";

const CLI = path.join(repoRoot, "dist", "bin", "agentd.js");
// A bound for a hang, not a speed: a start from the compiler's output
// took over a minute on a loaded CI machine running at half its usual speed.
const START_TIMEOUT_MS = 120_000;

export interface AgentdProcess {
  /** e.g. https://127.0.0.1:40123/1.0, read from the banner. */
  url: string;
  certPath: string;
  /** The operator listener's http://host:port, from the banner; null when it is off. */
  opsUrl: string | null;
  pid: number;
  child: ChildProcess;
  /** Everything the process wrote so far: the banner (stderr) and the JSON logs (stdout). */
  output(): string;
  /** Only what it wrote to stdout: its JSON log lines. */
  logs(): string;
  /** Whether the process is still running. */
  alive(): boolean;
  call(method: string, pathAndQuery: string, options?: CallOptions): Promise<Answer>;
  /** Resolves with how the process ended, without sending anything. */
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends the signal and resolves with how the process ended. */
  kill(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export class AgentdExited extends Error {
  constructor(
    readonly code: number | null,
    readonly signal: NodeJS.Signals | null,
    readonly output: string,
  ) {
    super(`agentd exited before serving (code ${String(code)}, signal ${String(signal)}):\n${output}`);
  }
}

/** Every child started here is killed when the test process exits, so none outlives a failed run. */
const children = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of children) child.kill("SIGKILL");
});

/** The test runner's environment without its own AGENTD_* variables, then the defaults, then `env`. */
function agentdEnv(defaults: Record<string, string>, env: Record<string, string>): NodeJS.ProcessEnv {
  return { ...envWithoutAgentd(), ...defaults, ...env };
}

/**
 * Starts `agentd serve` with exactly `env` as its AGENTD_* configuration
 * (the test runner's own AGENTD_* variables are not passed on), in `cwd`:
 * pass a temporary folder, so no `.env` file of the repository is read.
 * AGENTD_PORT defaults to 0, AGENTD_LOG_LEVEL to warn and AGENTD_RATE_LIMIT
 * to 0 unless `env` says otherwise. Resolves once the banner is printed;
 * rejects with AgentdExited when the process ends first.
 */
export async function spawnAgentd(
  env: Record<string, string>,
  options: {
    cwd: string;
    /** Starts the process under `ulimit -n` this many open files. */
    fileLimit?: number;
    /** Starts the process under `ulimit -f`: no file it writes may grow past this many bytes (a write beyond fails with EFBIG). */
    fileSizeLimitBytes?: number;
    /** The command's script, if not the bundled one (dist/bin/agentd.js). */
    cli?: string;
    /** Called with everything written so far, on each write before the banner: to act during the start. */
    whileStarting?: (output: string, child: ChildProcess) => void;
  },
): Promise<AgentdProcess> {
  const childEnv = agentdEnv({ AGENTD_PORT: "0", AGENTD_OPS_PORT: "0", AGENTD_DRAIN_DELAY: "0", AGENTD_LOG_LEVEL: "warn", AGENTD_RATE_LIMIT: "0" }, env);

  const node = [process.execPath, options.cli ?? CLI, "serve"];
  // sh sets the limits, then becomes node (exec): the pid stays the server's.
  const limits = [
    ...(options.fileLimit === undefined ? [] : [`ulimit -n ${options.fileLimit}`]),
    // In 512-byte blocks, POSIX's unit for sh.
    ...(options.fileSizeLimitBytes === undefined ? [] : [`ulimit -f ${Math.floor(options.fileSizeLimitBytes / 512)}`]),
  ];
  const [command, ...args] = limits.length === 0 ? node : ["/bin/sh", "-c", `${limits.join(" && ")} && exec "$0" "$@"`, ...node];
  const child = spawn(command!, args, {
    cwd: options.cwd,
    env: childEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (child.pid === undefined) throw new Error("could not spawn agentd");
  children.add(child);
  const pid = child.pid;

  let log = "";
  let stdout = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    log += chunk;
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (log += chunk));
  const starting = options.whileStarting;
  const onStarting = starting ? () => starting(log, child) : null;
  if (onStarting) {
    child.stdout.on("data", onStarting);
    child.stderr.on("data", onStarting);
  }

  let ended: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => {
      ended = { code, signal };
      children.delete(child);
      resolve(ended);
    });
  });

  const banner = await new Promise<{ url: string; certPath: string; opsUrl: string | null }>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`agentd did not print its banner within ${START_TIMEOUT_MS} ms:\n${log}`));
    }, START_TIMEOUT_MS);
    const check = (): void => {
      const url = /agentd is serving (https:\/\/\S+)/.exec(log)?.[1];
      const certPath = /certificate: (.+)/.exec(log)?.[1]?.trim();
      const ops = /operator: +(http:\/\/\S+|off)/.exec(log)?.[1];
      if (url !== undefined && certPath !== undefined && ops !== undefined) {
        clearTimeout(timer);
        child.stderr.off("data", check);
        if (onStarting) {
          child.stdout.off("data", onStarting);
          child.stderr.off("data", onStarting);
        }
        resolve({ url, certPath, opsUrl: ops === "off" ? null : ops });
      }
    };
    child.stderr.on("data", check);
    void exit.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new AgentdExited(code, signal, log));
    });
  });

  const dispatcher = new Agent({ connect: { ca: readFileSync(banner.certPath, "utf8") } });

  return {
    ...banner,
    pid,
    child,
    output: () => log,
    logs: () => stdout,
    alive: () => ended === null,
    exited: () => exit,
    call: (method, pathAndQuery, options = {}) => callHttps(dispatcher, method, banner.url + pathAndQuery, options),
    async kill(signal) {
      if (ended === null) child.kill(signal);
      const result = await exit;
      await dispatcher.destroy();
      return result;
    },
  };
}

/** Runs one `agentd` admin command (e.g. `token create --acl x`) to completion, with the same environment rules as spawnAgentd. */
export async function runAgentd(
  args: string[],
  env: Record<string, string>,
  /**
   * `stdout`: a file descriptor to write to instead of a pipe read here (then `stdout` is "").
   * `input`: written to its standard input, which is then closed (otherwise it reads nothing: /dev/null).
   */
  options: { cwd: string; timeoutMs?: number; stdout?: number; input?: string },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const childEnv = agentdEnv({ AGENTD_LOG_LEVEL: "warn" }, env);
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: options.cwd,
    env: childEnv,
    stdio: [options.input === undefined ? "ignore" : "pipe", options.stdout ?? "pipe", "pipe"],
  });
  children.add(child);
  // A command that exits without reading it all must not fail the test with EPIPE.
  child.stdin?.on("error", () => {});
  child.stdin?.end(options.input);
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? START_TIMEOUT_MS);
  const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
  clearTimeout(timer);
  children.delete(child);
  return { code, stdout, stderr };
}
