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
