import { fileURLToPath } from "node:url";
import path from "node:path";
import { existsSync, readFileSync } from "node:fs";
import { parse } from "yaml";

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

/** The path of the contract's first server (`https://localhost:9493/1.0` → `/1.0`), where the API is mounted. */
function basePath(contractPath: string): string {
  const { servers } = parse(readFileSync(contractPath, "utf8")) as { servers?: { url?: string }[] };
  const url = servers?.[0]?.url;
  if (url === undefined) throw new Error(`${contractPath} names no server`);
  return new URL(url).pathname.replace(/\/+$/, "");
}

export const BASE_PATH = basePath(CONTRACT_PATH);
