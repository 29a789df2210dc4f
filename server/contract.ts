import { fileURLToPath } from "node:url";
import path from "node:path";
import { existsSync } from "node:fs";

/**
 * openapi.yaml sits at the repository root, whether this module runs from
 * server/ (tests, tsx) or dist/server/ (compiled): look upwards for it rather
 * than shipping a copy that could drift.
 */
export function findContract(from: string = path.dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "openapi.yaml");
    if (existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`openapi.yaml not found above ${from}`);
  }
}

export const CONTRACT_PATH = findContract();
/** The path of the contract's servers (`https://…/1.0`). */
export const BASE_PATH = "/1.0";
