// The package's root: the folder that holds openapi.yaml and package.json,
// found upwards from this module whether it runs from server/ (tests, tsx),
// dist/server/ (compiled) or dist/bin/ (bundled, installed or not). Its own
// module, small: the commands read the version here without loading the
// contract's module and its validator.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The nearest folder at or above `from` that holds openapi.yaml; throws when there is none. */
export function packageRoot(from: string = path.dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "openapi.yaml"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`openapi.yaml not found above ${from}`);
  }
}

// The commit the bundles were built from, `.dirty` after it when the clone
// had changes not committed (scripts/bundle.ts); undefined when the code
// runs from its sources (tsx) or was built without git.
declare const BUILT_FROM_COMMIT: string | undefined;

/**
 * The package's version with the commit its bundles were built from as
 * SemVer build metadata (`17.5.0+946eca9c1d2e`): every build of a release
 * has the same package version, and an operator must tell two builds apart
 * (which one runs, an upgrade, a rollback). The package version alone when
 * the commit is not known.
 */
export function buildVersion(): string {
  const version = packageVersion();
  return typeof BUILT_FROM_COMMIT === "string" ? `${version}+${BUILT_FROM_COMMIT}` : version;
}

/**
 * The package's version (its package.json), or "unknown" when there is no
 * readable one: every command shows it, and none may fail for want of it.
 */
export function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(path.join(packageRoot(), "package.json"), "utf8")) as { version?: unknown };
    return typeof pkg.version === "string" ? pkg.version : "unknown";
  } catch {
    return "unknown";
  }
}
