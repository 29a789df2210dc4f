// Runs agentctl as installed users do: the bundled command the package
// installs (dist/bin/agentctl.js, package.json's bin; built once by the test
// run's global setup), with only the environment given.
import path from "node:path";
import { repoRoot } from "../../devkit/root.js";
import { run, type RunResult } from "../../devkit/run.js";

/** The installed command's file, for a test that runs it from a shell. */
export const agentctlBin = path.join(repoRoot, "dist", "bin", "agentctl.js");

/** How agentctl ended (devkit/run.ts): `code` is -1 if it could not start or was killed by a signal. */
export type AgentctlRun = RunResult;

/** Runs agentctl with PATH, NO_COLOR and `env` (no AGENTD_* variable of the test runner's is inherited); no stdin. */
export function runAgentctl(args: string[], env: Record<string, string> = {}): Promise<AgentctlRun> {
  return run(process.execPath, [agentctlBin, ...args], { env: { PATH: process.env.PATH, NO_COLOR: "1", ...env } });
}
