// npm run release -- <release> [--amend]
// npm run release -- --changelog      (only rewrite releases/CHANGELOG.md)
//
// Publishes a release: bundles its view (the `agentd@<release>` apis entry of
// redocly.yaml), checks that it lints with no problem, and freezes it as
// releases/openapi-<release>.yaml; then rewrites the changelog and the
// release's types (npm run generate). A published release is never
// overwritten: correcting its record on purpose takes --amend, which rewrites
// the file and prints the difference (say why in the commit).
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { createTwoFilesPatch } from "diff";
import { renderChangelog } from "./lib/changelog.js";
import { writeGenerated } from "./lib/generated.js";
import { changelogFile, frozenFile, listedReleases, projectRoot, readConfig, releaseAlias, releasesDir } from "./lib/project.js";
import { bundleView, lintBundled, withScratch } from "./lib/redocly.js";

function fail(message: string, code = 1): never {
  console.error(message);
  process.exit(code);
}

const USAGE = "usage: npm run release -- <release> [--amend]  |  npm run release -- --changelog";

let parsed: { values: { amend?: boolean; changelog?: boolean }; positionals: string[] };
try {
  parsed = parseArgs({ options: { amend: { type: "boolean" }, changelog: { type: "boolean" } }, allowPositionals: true });
} catch (error) {
  fail(`${(error as Error).message}\n${USAGE}`, 2);
}

async function writeChangelog(): Promise<void> {
  await writeFile(changelogFile, await renderChangelog());
  console.log(`rewrote ${path.relative(projectRoot, changelogFile)}`);
}

if (parsed.values.changelog) {
  if (parsed.positionals.length > 0 || parsed.values.amend) fail(USAGE, 2);
  await writeChangelog();
  process.exit(0);
}
const [release, ...extra] = parsed.positionals;
if (release === undefined || extra.length > 0) fail(USAGE, 2);

const releases = listedReleases();
if (!releases.includes(release)) {
  fail(`${release} is not a release of the contract: add it to info.x-releases in openapi.yaml (with its history row) first. Listed: ${releases.join(", ")}`, 2);
}
const alias = releaseAlias(release);
if (readConfig().apis?.[alias] === undefined) fail(`redocly.yaml has no apis entry ${alias}: add one (see the others) first`, 2);

const target = frozenFile(release);
const shown = path.relative(projectRoot, target);
const published = existsSync(target);
if (published && !parsed.values.amend) {
  fail(`${shown} is published and frozen. To correct the record of ${release} on purpose: npm run release -- ${release} --amend`);
}

const view = await bundleView(alias);
const lint = await withScratch(async (dir) => {
  const file = path.join(dir, path.basename(target));
  await writeFile(file, view);
  return lintBundled(file, alias);
});
if (lint.errors + lint.warnings > 0) {
  const problems = lint.problems.map((p) => `  ${p.severity} ${p.ruleId}: ${p.message} (${p.location?.[0]?.pointer ?? "?"})`);
  fail(`the view of ${release} does not pass redocly lint, so it is not published:\n${problems.join("\n")}`);
}

if (published) {
  const before = await readFile(target, "utf8");
  if (before === view) {
    console.log(`${shown} is already what the contract derives: nothing to amend`);
    process.exit(0);
  }
  process.stdout.write(createTwoFilesPatch(`a/${shown}`, `b/${shown}`, before, view));
}
await mkdir(releasesDir, { recursive: true });
await writeFile(target, view);
console.log(`${published ? "amended" : "published"} ${shown}`);

await writeChangelog();
console.log(await writeGenerated());
console.log(`commit ${shown}, the changelog and generated/${published ? ", saying why the record of " + release + " changed" : ""}`);
