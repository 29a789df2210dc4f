// Every package the lock installs supports the lowest Node.js version the
// project declares (package.json's engines) and the one running the tests. A dependency whose engines leave them out may work
// today only by chance, and `npm ci` warns about it (EBADENGINE): its line
// must be pinned to one that still supports them (README, Toolchain).
import { readFileSync } from "node:fs";
import path from "node:path";
import semver from "semver";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../devkit/root.js";

interface LockEntry {
  version?: string;
  engines?: { node?: string } | string[];
}

/** The lock's packages whose declared Node.js range leaves out one of `versions`: "path@version needs range". */
function unsupported(packages: Record<string, LockEntry>, versions: string[]): string[] {
  const found: string[] = [];
  for (const [where, entry] of Object.entries(packages)) {
    // An old form (an array of strings) that npm itself no longer checks.
    const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
    if (where === "" || range === undefined) continue;
    // As npm checks engines: a release candidate counts as its version.
    const left = versions.filter((version) => !semver.satisfies(version, range, { includePrerelease: true }));
    if (left.length > 0) found.push(`${where}@${entry.version ?? "?"} needs node ${range}, not ${left.join(" or ")}`);
  }
  return found;
}

const manifest = JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(path.join(repoRoot, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> };

describe("Node.js versions of the dependencies", () => {
  const lowest = semver.minVersion(manifest.engines.node)?.version;

  it("every package in the lock supports the lowest Node.js the project declares and the one running", () => {
    expect(lowest).toBeDefined();
    expect(semver.satisfies(process.versions.node, manifest.engines.node, { includePrerelease: true })).toBe(true);
    expect(unsupported(lock.packages, [lowest!, process.versions.node])).toEqual([]);
  });

  it("finds a package that needs a newer Node.js, and passes one without engines or with the old form", () => {
    const packages: Record<string, LockEntry> = {
      "": { version: "1.0.0", engines: { node: ">=99" } },
      "node_modules/old": { version: "1.0.0", engines: { node: ">= 0.6" } },
      "node_modules/none": { version: "1.0.0" },
      "node_modules/array": { version: "1.0.0", engines: ["node >= 0.8"] },
      "node_modules/a/node_modules/cookie": { version: "2.0.2", engines: { node: ">=22" } },
    };
    expect(unsupported(packages, ["20.19.0", "22.1.0"])).toEqual(["node_modules/a/node_modules/cookie@2.0.2 needs node >=22, not 20.19.0"]);
  });
});
