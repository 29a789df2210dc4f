// Runs a command to its end and reports how it ended, never throwing: the
// caller decides what a non-zero exit means (a test asserts it, a build step
// throws with the output, a script prints it).
//
//   const result = await run("npm", ["run", "--silent", "lint"], { cwd: repoRoot });
//   if (result.code !== 0) throw new Error(result.stdout + result.stderr);
import { spawn } from "node:child_process";

export interface RunResult {
  /** The exit code; -1 when the command could not start, was killed by a signal or timed out. */
  code: number;
  stdout: string;
  /** What it wrote to stderr, or why it could not start. */
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  /** The whole environment of the command (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Written to its stdin, which is then closed (default: no stdin). */
  input?: string;
  /** Killed with SIGKILL after this long (default: never). */
  timeoutMs?: number;
}

export function run(file: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
    let failed: Error | undefined;
    child.once("error", (error) => (failed = error));
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      if (failed !== undefined) resolve({ code: -1, stdout, stderr: stderr + String(failed) });
      else if (code === null) resolve({ code: -1, stdout, stderr: `${stderr}killed by ${String(signal)}` });
      else resolve({ code, stdout, stderr });
    });
    if (options.input !== undefined) child.stdin!.end(options.input);
  });
}
