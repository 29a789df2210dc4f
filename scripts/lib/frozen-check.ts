// A published release stays what it was: each releases/openapi-<release>.yaml
// must be semantically identical to the view openapi.yaml derives for that
// release today. Both go through the plugin's prose-free decorator, so
// descriptions, summaries and the wording of examples do not count; what is
// left (paths, operations, parameters, schemas and constraints, security,
// servers, responses) must match exactly. The record around them is checked
// too: the set of published releases, info.version, and the changelog.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import diff from "microdiff";
import { renderChangelog } from "./changelog.js";
import type { Finding } from "./finding.js";
import { changelogFile, contractFile, contractVersion, frozenFile, frozenReleases, listedReleases, projectRoot, readConfig, releaseAlias, strayFrozenFiles } from "./project.js";
import { bundleInto, readJson, withScratch } from "./redocly.js";
import type { BundleRequest } from "./redocly.js";

const PROSE_FREE = { "agentd/prose-free": "on" };

const pointer = (segments: (string | number)[]): string =>
  `#/${segments.map((segment) => String(segment).replace(/~/g, "~0").replace(/\//g, "~1")).join("/")}`;

const show = (value: unknown): string => {
  const text = JSON.stringify(value);
  return text === undefined ? "nothing" : text.length > 120 ? `${text.slice(0, 117)}...` : text;
};

/** Findings about the set of published releases itself: strays, gaps (but the removed ones, reported apart), missing apis entries. */
function bookkeeping(frozen: string[], removed: string[]): Finding[] {
  const findings: Finding[] = [];
  for (const name of strayFrozenFiles()) {
    findings.push({
      what: `releases/${name} is published but not a release of the contract`,
      where: `releases/${name}`,
      why: "every published release is listed in info.x-releases of openapi.yaml, with its history row",
    });
  }
  const listed = listedReleases();
  const latest = frozen.at(-1);
  for (const release of listed) {
    if (latest !== undefined && listed.indexOf(release) < listed.indexOf(latest) && !frozen.includes(release) && !removed.includes(release)) {
      findings.push({
        what: `release ${release} is not published, though ${latest} is`,
        where: path.relative(projectRoot, frozenFile(release)),
        why: `releases are published in order: npm run release -- ${release}`,
      });
    }
  }
  const apis = readConfig().apis ?? {};
  for (const release of listed) {
    if (apis[releaseAlias(release)] === undefined) {
      findings.push({ what: `release ${release} has no view`, where: "redocly.yaml apis", why: `add an apis entry ${releaseAlias(release)} like the others` });
    }
  }
  // What openapi.yaml describes is its newest release: the built server
  // reports info.version as the release it serves (agentd_build_info).
  const version = contractVersion();
  const newest = listed.at(-1);
  if (newest !== undefined && version !== newest) {
    const shown = version === undefined ? "missing" : typeof version === "string" ? `"${version}"` : `${JSON.stringify(version)} (unquoted YAML)`;
    findings.push({
      what: `info.version is ${shown}, but the newest release of info.x-releases is "${newest}"`,
      where: "openapi.yaml #/info/version",
      why: `openapi.yaml describes its newest release: set info.version to "${newest}", quoted`,
    });
  }
  return findings;
}

/**
 * The changelog is the record of what was published: the releases it has a
 * section for whose frozen file is gone (listed in openapi.yaml or not) were
 * removed, which rewriting the changelog would only hide.
 */
function removedReleases(committed: string | null): string[] {
  const recorded = [...(committed ?? "").matchAll(/^## (\S+)$/gm)].map((heading) => heading[1]!);
  return recorded.filter((release) => !existsSync(frozenFile(release)));
}

/**
 * The changelog is the published releases' diffs, generated: a hand edit, or
 * a frozen file added or amended without rewriting it, makes it say
 * something the releases do not. A removed release is said first, alone.
 */
async function changelogFindings(committed: string | null, removed: string[]): Promise<Finding[]> {
  if (removed.length > 0) {
    return removed.map((release) => {
      const file = path.relative(projectRoot, frozenFile(release));
      return {
        what: `release ${release} is published (releases/CHANGELOG.md has its section) but ${file} is gone`,
        where: file,
        why: `a published release is never removed: restore the file from the commit before the one that deleted it (git log --diff-filter=D -- ${file} names that one)`,
      };
    });
  }
  if (committed === (await renderChangelog())) return [];
  return [
    {
      what: committed === null ? "releases/CHANGELOG.md is missing" : "releases/CHANGELOG.md is not what the published releases derive",
      where: path.relative(projectRoot, changelogFile),
      why:
        "it is generated from releases/: never edit it by hand; npm run release -- --changelog rewrites it. " +
        "If a frozen file changed instead (git diff -- releases/ shows it), restore that file (git checkout -- releases/openapi-<release>.yaml): " +
        "a published release changes only through npm run release -- <release> --amend",
    },
  ];
}

export async function checkFrozenReleases(): Promise<Finding[]> {
  const frozen = frozenReleases();
  const committed = await readFile(changelogFile, "utf8").catch(() => null);
  const removed = removedReleases(committed);
  const findings = [...bookkeeping(frozen, removed), ...(await changelogFindings(committed, removed))];
  const apis = readConfig().apis ?? {};
  const compared = frozen.filter((release) => apis[releaseAlias(release)] !== undefined);
  const requests: Record<string, BundleRequest> = {};
  for (const release of compared) {
    requests[`published ${release}`] = { root: frozenFile(release), decorators: PROSE_FREE };
    requests[`derived ${release}`] = { root: contractFile, decorators: { ...apis[releaseAlias(release)]!.decorators, ...PROSE_FREE } };
  }
  await withScratch(async (dir) => {
    const files = await bundleInto(dir, requests);
    for (const release of compared) {
      const published = await readJson(files[`published ${release}`]!);
      const derived = await readJson(files[`derived ${release}`]!);
      const where = path.relative(projectRoot, frozenFile(release));
      for (const difference of diff(published, derived)) {
        const at = pointer(difference.path);
        const what =
          difference.type === "CREATE"
            ? `release ${release} would gain ${at}`
            : difference.type === "REMOVE"
              ? `release ${release} would lose ${at}`
              : `release ${release} would change ${at}`;
        const values =
          difference.type === "CREATE"
            ? `the contract now derives ${show(difference.value)} there, which ${release} did not have`
            : difference.type === "REMOVE"
              ? `${release} had ${show(difference.oldValue)} there, which the contract no longer derives`
              : `${release} had ${show(difference.oldValue)}, the contract now derives ${show(difference.value)}`;
        findings.push({
          what,
          where: `${where} ${at}`,
          why:
            `${values}. A published release is frozen: give a new element the x-since of a new release ` +
            `(with its history row), or correct the record on purpose with npm run release -- ${release} --amend`,
        });
      }
    }
  });
  return findings;
}
