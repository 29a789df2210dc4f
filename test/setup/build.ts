// Global setup of `npm test`: what several files need built, built once per
// run and before any file starts. dist/ is what users run (`npm start`,
// agentctl), so spawned servers and CLIs run it with plain node rather than
// through a TypeScript loader, and test/package.test.ts packs it; the docs
// site is what readers open; the PGlite template spares every test database
// its own initdb.
import { rm } from "node:fs/promises";
import type { TestProject } from "vitest/node";
import { repoRoot } from "../../devkit/root.js";
import { run } from "../../devkit/run.js";
import { createPgliteTemplate } from "../helpers/pglite-template.js";

async function step(what: string, file: string, args: string[]): Promise<void> {
  const result = await run(file, args, { cwd: repoRoot });
  if (result.code !== 0) throw new Error(`${what} failed before the tests could start (exit ${result.code}):\n${result.stdout}${result.stderr}`);
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [template] = await Promise.all([
    createPgliteTemplate(),
    // What `npm pack` ships too: the compiled modules and the bundled commands (scripts/bundle.ts).
    step("building dist/ (npm run build)", "npm", ["run", "--silent", "build"]),
    step("building the docs (npm run docs)", "npm", ["run", "--silent", "docs"]),
  ]);
  project.provide("pgliteTemplate", template);
  return () => rm(template, { recursive: true, force: true });
}
