import { CONTRACT } from "../contract.js";
import { buildVersion } from "../package-root.js";
import type { BuildInfo } from "./prometheus.js";

/** The package version with its build (buildVersion) and the contract release it serves (info.version). */
export function readBuildInfo(): BuildInfo {
  const info = CONTRACT.info as { version?: unknown } | undefined;
  return { version: buildVersion(), release: typeof info?.version === "string" ? info.version : "unknown" };
}
