// Starts `npm run mock -- --stateful` exactly as a front-end developer does,
// in a process group of its own (so a test can check that stopping it leaves
// no process behind) and with a temporary directory of its own (TMPDIR, so a
// test can check that it leaves no file behind).
//
//   const mock = await startStatefulMockProcess(["--agents", "1000"]);
//   await fetch(`${mock.url}/agents`, { headers: { "X-Auth-Token": "t" } });
//   await mock.interrupt();   // SIGINT to npm, as Ctrl-C
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { vi } from "vitest";
import { envWithoutAgentd } from "../../devkit/child-env.js";
import { freePort } from "../../devkit/ports.js";
import { repoRoot } from "../../devkit/root.js";

export interface StatefulMockProcess {
  /** `http://127.0.0.1:<port>`, as the banner prints it. */
  url: string;
  /** npm's process id, also the id of the process group. */
  pid: number;
  /** The TMPDIR the mock was given. */
  tmp: string;
  /** What the mock printed on standard output (the banner). */
  stdout(): string;
  output(): string;
  /** Sends SIGINT to npm alone (as the terminal's Ctrl-C reaches it) and resolves when npm has exited. */
  interrupt(): Promise<void>;
  /** Kills the whole group, whatever is left of it. */
  kill(): void;
}

const BANNER_END = /^ {2}forced: .*$/m;

export async function startStatefulMockProcess(args: readonly string[] = [], env: Record<string, string> = {}): Promise<StatefulMockProcess> {
  const tmp = mkdtempSync(path.join(tmpdir(), "agentd-mock-tmp-"));
  const port = await freePort();
  const child = spawn("npm", ["run", "--silent", "mock", "--", "--stateful", "--port", String(port), ...args], {
    cwd: repoRoot,
    env: { ...envWithoutAgentd(), TMPDIR: tmp, NO_COLOR: "1", ...env },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const pid = child.pid!;
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once("exit", () => resolve(void (exited = true))));
  const kill = (): void => {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // The group is gone already.
    }
  };
  process.once("exit", kill);
  try {
    await vi.waitFor(
      () => {
        if (exited) throw new Error(`the mock exited before its banner:\n${stdout}${stderr}`);
        if (!BANNER_END.test(stdout)) throw new Error(`no banner yet:\n${stdout}${stderr}`);
      },
      { timeout: 90_000, interval: 100 },
    );
  } catch (err) {
    kill();
    throw err;
  }
  return {
    url: `http://127.0.0.1:${port}`,
    pid,
    tmp,
    stdout: () => stdout,
    output: () => stdout + stderr,
    async interrupt() {
      process.kill(pid, "SIGINT");
      await exit;
    },
    kill,
  };
}
