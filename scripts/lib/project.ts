// Where the contract, its Redocly configuration and its published releases
// live, and the list of releases the contract declares (info.x-releases).
// Everything is found from the location of devkit/root.ts, so a copy of the
// project (the gate's self-tests run on one) checks itself, not the original.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { load } from "js-yaml";
import { repoRoot } from "../../devkit/root.js";
import { listedReleases as releasesListedIn } from "../../plugins/releases.js";

/** The repository root (devkit/root.ts), under the name the scripts use. */
export const projectRoot = repoRoot;
export const contractFile = path.join(projectRoot, "openapi.yaml");
export const configFile = path.join(projectRoot, "redocly.yaml");
export const releasesDir = path.join(projectRoot, "releases");
export const changelogFile = path.join(releasesDir, "CHANGELOG.md");

/** The apis entry of redocly.yaml that derives a release's view. */
export const releaseAlias = (release: string): string => `agentd@${release}`;

/** The published, frozen contract of a release. */
export const frozenFile = (release: string): string => path.join(releasesDir, `openapi-${release}.yaml`);

export interface ApiEntry {
  root: string;
  decorators?: Record<string, unknown>;
  rules?: Record<string, unknown>;
}

export interface RedoclyConfig {
  plugins?: string[];
  apis?: Record<string, ApiEntry>;
  [key: string]: unknown;
}

export function readConfig(): RedoclyConfig {
  return load(readFileSync(configFile, "utf8")) as RedoclyConfig;
}

/** An apis entry of redocly.yaml; throws naming it when there is none. */
export function apiEntry(alias: string): ApiEntry {
  const entry = readConfig().apis?.[alias];
  if (entry === undefined) throw new Error(`redocly.yaml has no apis entry ${alias}`);
  return entry;
}

/** info.x-releases of a contract file as it stands (oldest first); empty when it has none. */
export function releasesOf(file: string): string[] {
  const document = load(readFileSync(file, "utf8")) as { info?: Record<string, unknown> } | null;
  const releases = document?.info?.["x-releases"];
  return Array.isArray(releases) ? releases.map(String) : [];
}

/**
 * The releases openapi.yaml declares, oldest first, read and checked by the
 * plugin's own listedReleases (plugins/releases.js), which the release views
 * use: throws when the list is missing, empty or not quoted release numbers.
 */
export function listedReleases(): string[] {
  return releasesListedIn(load(readFileSync(contractFile, "utf8")));
}

/** info.version of openapi.yaml as written: a string when quoted as it should be, else whatever YAML made of it. */
export function contractVersion(): unknown {
  return (load(readFileSync(contractFile, "utf8")) as { info?: { version?: unknown } } | null)?.info?.version;
}

/** The listed releases that are published (have a frozen file), oldest first. */
export function frozenReleases(): string[] {
  return listedReleases().filter((release) => existsSync(frozenFile(release)));
}

/** Frozen files of releases openapi.yaml does not list (a release dropped from the history). */
export function strayFrozenFiles(): string[] {
  if (!existsSync(releasesDir)) return [];
  const listed = new Set(listedReleases().map((release) => path.basename(frozenFile(release))));
  return readdirSync(releasesDir).filter((name) => /^openapi-.*\.yaml$/.test(name) && !listed.has(name));
}
