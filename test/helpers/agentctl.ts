// Runs the compiled agentctl (dist/client/agentctl.js, built once by the test
// run's global setup) as installed users do, with only the environment given.
import { spawn } from "node:child_process";
import path from "node:path";
import { repoRoot } from "../../devkit/root.js";

const bin = path.join(repoRoot, "dist", "client", "agentctl.js");

export interface AgentctlRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs agentctl with PATH, NO_COLOR and `env` (no AGENTD_* variable of the test runner's is inherited). */
export function runAgentctl(args: string[], env: Record<string, string> = {}): Promise<AgentctlRun> {
  const base: NodeJS.ProcessEnv = { PATH: process.env.PATH, NO_COLOR: "1" };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env: { ...base, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}
