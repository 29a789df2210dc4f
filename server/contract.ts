import { fileURLToPath } from "node:url";
import path from "node:path";
import { existsSync } from "node:fs";

/**
 * openapi.yaml sits at the repository root, whether this module runs from
 * server/ (tests) or dist/server/ (compiled): look upwards for it rather than
 * shipping a copy that could drift.
 */
function findContract(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, "openapi.yaml");
    if (existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error("openapi.yaml not found above " + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

export const CONTRACT_PATH = findContract();
/** The path of the contract's servers (`https://…/1.0`). */
export const BASE_PATH = "/1.0";
