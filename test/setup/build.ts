// Global setup of `npm test`: what several files need built, built once per
// run and before any file starts. dist/ is what users run (`npm start`,
// agentctl), so spawned servers and CLIs run it with plain node rather than
// through a TypeScript loader; the docs site is what readers open.
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "../..");

async function step(what: string, file: string, args: string[]): Promise<void> {
  try {
    await run(file, args, { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    throw new Error(`${what} failed before the tests could start:\n${e.stdout ?? ""}${e.stderr ?? String(error)}`, { cause: error });
  }
}

export default async function setup(): Promise<void> {
  await Promise.all([
    step("building dist/ (tsc -p tsconfig.build.json)", process.execPath, [path.join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json"]),
    step("building the docs (npm run docs)", "npm", ["run", "--silent", "docs"]),
  ]);
}
