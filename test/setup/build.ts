// Global setup of `npm test`: what several files need built, built once per
// run and before any file starts. dist/ is what users run (`npm start`,
// agentctl), so spawned servers and CLIs run it with plain node rather than
// through a TypeScript loader; the docs site is what readers open.
import path from "node:path";
import { repoRoot } from "../../devkit/root.js";
import { run } from "../../devkit/run.js";

async function step(what: string, file: string, args: string[]): Promise<void> {
  const result = await run(file, args, { cwd: repoRoot });
  if (result.code !== 0) throw new Error(`${what} failed before the tests could start (exit ${result.code}):\n${result.stdout}${result.stderr}`);
}

export default async function setup(): Promise<void> {
  await Promise.all([
    step("building dist/ (tsc -p tsconfig.build.json)", process.execPath, [path.join(repoRoot, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json"]),
    step("building the docs (npm run docs)", "npm", ["run", "--silent", "docs"]),
  ]);
}
