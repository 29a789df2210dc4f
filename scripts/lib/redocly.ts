// Redocly CLI runs for the release scripts: bundling views (several at once,
// through a throwaway configuration), linting a bundled view with the rules
// of its apis entry, and `redocly diff` with its JSON report. The CLI, not a
// Node API: @redocly/cli bundles its own core, and the CLI is what a reviewer
// runs by hand too.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { dump } from "js-yaml";
import { run, type RunResult } from "../../devkit/run.js";
import { projectRoot, readConfig } from "./project.js";
import type { ApiEntry } from "./project.js";

const redoclyBin = path.join(projectRoot, "node_modules", ".bin", "redocly");

/** Runs the Redocly CLI in `cwd` (whose redocly.yaml then applies); never throws on a non-zero exit, only when the CLI did not run to an exit. */
export async function redocly(args: string[], cwd = projectRoot): Promise<RunResult> {
  const outcome = await run(redoclyBin, args, {
    cwd,
    env: { ...process.env, NO_COLOR: "1", REDOCLY_SUPPRESS_NOTIFICATIONS: "true", REDOCLY_TELEMETRY: "off" },
  });
  if (outcome.code === -1) throw new Error(`redocly ${args[0] ?? ""} did not run to an exit:\n${outcome.stderr}`);
  return outcome;
}

/** A temporary directory, removed once `use` settles. */
export async function withScratch<T>(use: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), "agentd-releases-"));
  try {
    return await use(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The project's plugins, as absolute paths for a configuration written elsewhere. */
function plugins(): string[] {
  return (readConfig().plugins ?? []).map((plugin) => path.resolve(projectRoot, plugin));
}

export interface BundleRequest {
  /** The document to bundle. */
  root: string;
  /** Decorators to apply, as in an apis entry of redocly.yaml. */
  decorators?: ApiEntry["decorators"];
}

/**
 * Bundles every request in one Redocly run, as JSON files in `dir`; returns
 * each file by the request's name. `dereferenced` inlines every `$ref`, so
 * that `redocly diff` reports a change of a shared schema at every operation
 * that uses it.
 */
export async function bundleInto(
  dir: string,
  requests: Record<string, BundleRequest>,
  options: { dereferenced?: boolean } = {},
): Promise<Record<string, string>> {
  if (Object.keys(requests).length === 0) return {};
  const configDir = await mkdtemp(path.join(dir, "config-"));
  const apis = Object.fromEntries(
    Object.entries(requests).map(([name, request], index) => [
      name,
      { root: path.resolve(request.root), output: path.join(dir, `bundle-${index}.json`), decorators: request.decorators ?? {} },
    ]),
  );
  await writeFile(path.join(configDir, "redocly.yaml"), dump({ plugins: plugins(), apis }));
  const outcome = await redocly(["bundle", ...(options.dereferenced ? ["--dereferenced"] : [])], configDir);
  if (outcome.code !== 0) throw new BundleError(withoutBanner(outcome.stdout + outcome.stderr));
  return Object.fromEntries(Object.entries(apis).map(([name, api]) => [name, api.output]));
}

/** `redocly bundle` refused the contract (a decorator threw, say): what it said, for the reviewer. */
export class BundleError extends Error {
  override readonly name = "BundleError";

  constructor(readonly output: string) {
    super(`redocly bundle failed:\n${output}`);
  }
}

/** Redocly's output without its boxed notices (the Node.js deprecation banner) and blank lines. */
function withoutBanner(output: string): string {
  return output
    .split("\n")
    .filter((line) => line.trim() !== "" && !/^\s*[╔║╚]/.test(line))
    .join("\n");
}

export async function readJson(file: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
}

/** Bundles an apis entry of redocly.yaml (`main`, `agentd@15.18`) as YAML text. */
export async function bundleView(alias: string): Promise<string> {
  return withScratch(async (dir) => {
    const output = path.join(dir, "view.yaml");
    const outcome = await redocly(["bundle", alias, "-o", output]);
    if (outcome.code !== 0) throw new Error(`redocly bundle ${alias} failed:\n${outcome.stdout}${outcome.stderr}`);
    return readFile(output, "utf8");
  });
}

export interface LintReport {
  errors: number;
  warnings: number;
  problems: { ruleId: string; severity: string; message: string; location?: { pointer?: string }[] }[];
}

/**
 * Lints a bundled view (`redocly lint` applies no decorators, so the bundle
 * is what must pass) with the project's rules and the exceptions stated in
 * the view's apis entry.
 */
export async function lintBundled(file: string, alias: string): Promise<LintReport> {
  const config = readConfig();
  const entry = config.apis?.[alias];
  if (entry === undefined) throw new Error(`redocly.yaml has no apis entry ${alias}`);
  return withScratch(async (dir) => {
    // The project's rules and plugin, and the view's own exceptions; not the
    // other apis entries, nor the docs settings (paths relative to the project).
    const lintConfig: Record<string, unknown> = { ...config, plugins: plugins(), apis: { [alias]: { root: path.resolve(file), rules: entry.rules ?? {} } } };
    delete lintConfig.openapi;
    await writeFile(path.join(dir, "redocly.yaml"), dump(lintConfig));
    const outcome = await redocly(["lint", alias, "--format", "json"], dir);
    const start = outcome.stdout.indexOf("{");
    if (start < 0) throw new Error(`no report from redocly lint:\n${outcome.stdout}${outcome.stderr}`);
    const report = JSON.parse(outcome.stdout.slice(start)) as { totals: { errors: number; warnings: number }; problems: LintReport["problems"] };
    return { ...report.totals, problems: report.problems };
  });
}

export interface DiffChange {
  /** JSON pointer of the change in the revision (or the base, for a removal). */
  path: string;
  typeName: string;
  kind: "added" | "removed" | "modified";
  impact: "major" | "minor" | "patch";
  property?: string;
  verdicts: { ruleId: string; message: string }[];
  base?: { value?: unknown };
  revision?: { value?: unknown };
}

export interface DiffReport {
  summary: { major: number; minor: number; patch: number };
  changes: DiffChange[];
}

/**
 * `redocly diff base revision` with the project's configuration (its diff
 * rules: diff-recommended and the plugin's), as its JSON report.
 */
export async function diff(base: string, revision: string): Promise<DiffReport> {
  const outcome = await redocly(["diff", path.resolve(base), path.resolve(revision), "--format", "json", "--fail-on", "none"]);
  const start = outcome.stdout.indexOf("{");
  if (outcome.code !== 0 || start < 0) throw new Error(`redocly diff failed:\n${outcome.stdout}${outcome.stderr}`);
  return JSON.parse(outcome.stdout.slice(start)) as DiffReport;
}
