import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Config } from "../config/config.js";
import type { PgliteThread } from "../db/threaded-pglite.js";
import { spawnPgliteWorker } from "../db/pglite-worker.js";
import { requireWithCodeCache, type CodeCacheSaved, type CodeCacheStatus } from "./code-cache.js";

type Serving = typeof import("../serving.js");

export interface LoadedServing {
  serving: Serving;
  /** The embedded database's thread, already loading PGlite; undefined on PostgreSQL. */
  pgliteThread: PgliteThread | undefined;
  /** `source`: no bundle beside this module (tsx, tsc's output), loaded as ES modules without a cache. */
  codeCache: CodeCacheStatus | "source";
  /** Writes the code cache if this start had none it could use; see CachedRequire.save. */
  saveCodeCache: () => Promise<CodeCacheSaved>;
}

/** Where the serve command keeps the server's code cache. */
export function codeCacheDir(dataDir: string): string {
  return path.join(dataDir, "code-cache");
}

/**
 * Loads what `agentd serve` runs (serving.ts) and starts the embedded
 * database's thread first, which loads PGlite on another core meanwhile.
 *
 * In the build and the package, serving.ts is the bundle `serving.cjs`
 * beside this module's chunk, required with V8's code cache from
 * `<dataDir>/code-cache`: a start then spends its time on the database and
 * the validator, not on compiling the same code again. A deployment whose
 * data directory does not exist (PostgreSQL, its own certificate) gets no
 * data directory for the cache's sake, and no cache.
 */
export async function loadServing(config: Pick<Config, "dataDir" | "databaseUrl" | "dbStallTimeoutMs">): Promise<LoadedServing> {
  const threadOptions = { stallTimeoutMs: config.dbStallTimeoutMs };
  const embedded = config.databaseUrl === null;
  const bundle = fileURLToPath(new URL("./serving.cjs", import.meta.url));
  if (!existsSync(bundle)) {
    const serving = await import("../serving.js");
    return { serving, pgliteThread: embedded ? serving.startPgliteThread(undefined, threadOptions) : undefined, codeCache: "source", saveCodeCache: () => Promise.resolve("unchanged") };
  }
  // Started before the bundle loads, and handed to it in the same tick, so
  // none of the thread's events can come before its listeners.
  const worker = embedded ? spawnPgliteWorker() : undefined;
  let loaded;
  try {
    loaded = requireWithCodeCache<Serving>(bundle, codeCacheDir(config.dataDir));
  } catch (err) {
    // Nothing will ever talk to the thread: it must not outlive the failure.
    await worker?.terminate();
    throw err;
  }
  return {
    serving: loaded.exports,
    pgliteThread: worker && loaded.exports.startPgliteThread(worker, threadOptions),
    codeCache: loaded.status,
    saveCodeCache: () => loaded.save(),
  };
}
