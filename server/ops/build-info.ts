import { CONTRACT } from "../contract.js";
import { packageVersion } from "../package-root.js";
import type { BuildInfo } from "./prometheus.js";

/** The package version (package.json beside openapi.yaml) and the contract release it serves (info.version). */
export function readBuildInfo(): BuildInfo {
  const info = CONTRACT.info as { version?: unknown } | undefined;
  return { version: packageVersion(), release: typeof info?.version === "string" ? info.version : "unknown" };
}
