import { readFileSync } from "node:fs";
import path from "node:path";
import { CONTRACT, CONTRACT_PATH } from "../contract.js";
import type { BuildInfo } from "./prometheus.js";

/** The package version (package.json beside openapi.yaml) and the contract release it serves (info.version). */
export function readBuildInfo(): BuildInfo {
  const pkg = JSON.parse(readFileSync(path.join(path.dirname(CONTRACT_PATH), "package.json"), "utf8")) as { version?: unknown };
  const info = CONTRACT.info as { version?: unknown } | undefined;
  const text = (value: unknown) => (typeof value === "string" ? value : "unknown");
  return { version: text(pkg.version), release: text(info?.version) };
}
