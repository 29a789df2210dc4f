// openapi.yaml, taken as the next release (the view of the `main` apis
// entry), must not break a client of the latest published release: every
// change `redocly diff` rates major (diff-recommended and the plugin's own
// diff rules, from redocly.yaml) is a finding.
//
// redocly diff runs no diff rule when the configuration turns none on, and
// then reports nothing and passes. So a canary runs alongside: the latest
// release against a copy of itself without one path must come out breaking,
// or the check itself is the finding.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { changeReport } from "./change-report.js";
import type { Finding } from "./finding.js";
import { frozenReleases } from "./project.js";
import { bundleInto, diff, readJson, withScratch } from "./redocly.js";
import { frozenVersion, workingVersion } from "./versions.js";

async function canaryFails(dir: string, base: string): Promise<boolean> {
  const document = await readJson(base);
  const paths = { ...(document.paths as Record<string, unknown>) };
  const first = Object.keys(paths)[0];
  if (first === undefined) return true;
  delete paths[first];
  const canary = path.join(dir, "canary.json");
  await writeFile(canary, JSON.stringify({ ...document, paths }));
  return (await diff(base, canary)).summary.major > 0;
}

export async function checkBreaking(): Promise<Finding[]> {
  const latest = frozenReleases().at(-1);
  if (latest === undefined) return []; // nothing published, no client to break
  return withScratch(async (dir) => {
    const files = await bundleInto(dir, { base: frozenVersion(latest).request, next: workingVersion().request }, { dereferenced: true });
    const [seesBreaking, changes] = await Promise.all([canaryFails(dir, files.base!), diff(files.base!, files.next!)]);
    if (!seesBreaking) {
      return [
        {
          what: "redocly diff cannot see breaking changes",
          where: "redocly.yaml",
          why: "it rated a removed path as harmless, so its diff rules are off: keep diff-recommended in extends",
        },
      ];
    }
    const report = changeReport(latest, "openapi.yaml", changes);
    return report.groups.flatMap((group) =>
      group.changes
        .filter((change) => change.breaking)
        .map((change) => ({
          what: `${change.why.join(" ") || change.kind} (${change.kind})`,
          where: `${group.operation}${change.where === "" ? "" : ` ${change.where}`}`,
          why: `openapi.yaml, taken as the next release, would break a client of ${latest}`,
        })),
    );
  });
}
