// The versions of the contract a diff compares, and how each is bundled for
// `redocly diff`: a published release (its frozen file), the working
// openapi.yaml (its current view), any contract file, or openapi.yaml at a
// git revision. A source contract (one listing info.x-releases) is seen
// through the release-view decorator, as its docs page shows it.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { apiEntry, contractFile, frozenFile, listedReleases, projectRoot, releaseAlias, releasesOf } from "./project.js";
import { bundleInto, diff, withScratch } from "./redocly.js";
import type { BundleRequest, DiffReport } from "./redocly.js";

const run = promisify(execFile);

export interface Version {
  /** How reports name it: `15.18`, `openapi.yaml`, `main:openapi.yaml`. */
  label: string;
  request: BundleRequest;
}

// Components are inlined by the dereferenced bundle; left in place, each would
// be reported a second time next to the operations that use it.
const DROP_UNUSED_COMPONENTS = { "remove-unused-components": "on" };

export function frozenVersion(release: string): Version {
  return { label: release, request: { root: frozenFile(release), decorators: DROP_UNUSED_COMPONENTS } };
}

// What the `main` apis entry adds for the docs page only (links, code
// samples): prose and examples, never part of what a release is. A contract
// change is judged without them, so a new operation is not refused for
// want of its samples (samples:check asks for those).
const DOCS_ONLY = ["agentd/release-links", "agentd/code-samples"];

/** The working openapi.yaml, taken as the next release: the view of the `main` apis entry, without its docs-only decorators. */
export function workingVersion(): Version {
  const decorators = Object.fromEntries(Object.entries(apiEntry("main").decorators ?? {}).filter(([name]) => !DOCS_ONLY.includes(name)));
  return { label: "openapi.yaml", request: { root: contractFile, decorators: { ...decorators, ...DROP_UNUSED_COMPONENTS } } };
}

function fileVersion(label: string, file: string): Version {
  const isSource = releasesOf(file).length > 0;
  return { label, request: { root: file, decorators: { ...(isSource ? { "agentd/release-view": "on" } : {}), ...DROP_UNUSED_COMPONENTS } } };
}

/**
 * What `--from`/`--to` designate: a release (its frozen file, or its view
 * when not yet published), a file, or a git revision of openapi.yaml (read
 * into `scratch`).
 */
export async function resolveVersion(spec: string, scratch: string): Promise<Version> {
  if (listedReleases().includes(spec)) {
    if (existsSync(frozenFile(spec))) return frozenVersion(spec);
    return { label: spec, request: { root: contractFile, decorators: { ...apiEntry(releaseAlias(spec)).decorators, ...DROP_UNUSED_COMPONENTS } } };
  }
  if (existsSync(spec)) return path.resolve(spec) === contractFile ? workingVersion() : fileVersion(spec, spec);
  let text: string;
  try {
    text = (await run("git", ["show", `${spec}:openapi.yaml`], { cwd: projectRoot, maxBuffer: 16 * 1024 * 1024 })).stdout;
  } catch {
    throw new Error(`${spec} is neither a release of info.x-releases, nor a file, nor a git revision holding openapi.yaml`);
  }
  const file = path.join(scratch, `${spec.replace(/[^\w.-]+/g, "_")}-openapi.yaml`);
  await writeFile(file, text);
  return fileVersion(`${spec}:openapi.yaml`, file);
}

/** `redocly diff` of each pair (older, newer), bundling every version in one run. */
export async function diffVersions(pairs: [Version, Version][]): Promise<DiffReport[]> {
  return withScratch(async (dir) => {
    const requests: Record<string, BundleRequest> = {};
    pairs.forEach(([from, to], index) => {
      requests[`from${index}`] = from.request;
      requests[`to${index}`] = to.request;
    });
    const files = await bundleInto(dir, requests, { dereferenced: true });
    const reports: DiffReport[] = [];
    for (let index = 0; index < pairs.length; index++) {
      reports.push(await diff(files[`from${index}`]!, files[`to${index}`]!));
    }
    return reports;
  });
}
