import { closeSync, constants, openSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { PathFailure } from "../failure.js";
import { prepareRunDir } from "./run-dir.js";

/** Held by the one process that has the embedded database open. */
export interface DataDirLock {
  release(): Promise<void>;
}

export class DataDirBusyError extends Error {
  override readonly name = "DataDirBusyError";
}

const RETRY_MS = 100;

/**
 * PGlite is single-process: two processes writing one data directory would
 * corrupt it. The lock is a kernel lock (an open-file-description lock, by
 * fs-native-extensions) on `run/lock`, held for as long as this process
 * keeps the file open:
 * - the kernel drops it when the process ends, however it ends (kill -9
 *   included), so a crash never leaves a stale lock, and the file itself may
 *   stay (it is never removed: removing it would let two processes lock two
 *   different files under one name);
 * - run/ is private to the data directory's owner (run-dir.ts), so no other
 *   user can open the file, let alone hold its lock.
 * Two locks of one directory exclude each other in one process too.
 */
export async function lockDataDir(dataDir: string, { waitMs = 0 } = {}): Promise<DataDirLock> {
  let fd: number;
  try {
    // Inside run/, which only the data directory's owner can reach. O_NOFOLLOW:
    // the lock is this file, never what a link in its place points to.
    const file = path.join(prepareRunDir(dataDir), "lock");
    fd = openSync(file, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  } catch (err) {
    throw new PathFailure("open the data directory", dataDir, err);
  }
  const deadline = Date.now() + waitMs;
  try {
    const fsx = loadLockAddon();
    while (!fsx.tryLock(fd)) {
      if (Date.now() >= deadline) {
        throw new DataDirBusyError(`the data directory ${dataDir} is in use by another agentd process`);
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  } catch (err) {
    closeSync(fd);
    if (err instanceof DataDirBusyError) throw err;
    throw new PathFailure("lock the data directory", dataDir, err);
  }
  let held = true;
  return {
    release() {
      // Closing the file releases its lock.
      if (held) closeSync(fd);
      held = false;
      return Promise.resolve();
    },
  };
}

/**
 * The native addon that takes the lock, loaded here: a deployment on
 * PostgreSQL never takes the lock, nor loads it. It ships prebuilt for a set
 * of platforms only; where none loads (musl libc, as on Alpine, or an
 * architecture it has no build for), its own error lists every file it
 * tried, so this one says what that means for a deployment instead.
 *
 * Required, not imported: import() fails in the serve command's bundle,
 * which runs as a vm script with V8's code cache (scripts/bundle.ts), and
 * the addon is a CommonJS package anyway.
 */
function loadLockAddon(): typeof import("fs-native-extensions").default {
  try {
    return createRequire(import.meta.url)("fs-native-extensions") as typeof import("fs-native-extensions").default;
  } catch (err) {
    const glibc = (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime;
    const libc = process.platform === "linux" && glibc === undefined ? ", not glibc" : "";
    const reason = (err instanceof Error ? err.message : String(err)).split("\n")[0];
    throw new Error(
      `its native addon (fs-native-extensions) does not load on this platform (${process.platform}-${process.arch}${libc}): ${reason}. ` +
        "The embedded database needs it: on this platform use PostgreSQL (AGENTD_DATABASE_URL), or run agentd where the addon has a build, " +
        "such as Linux with glibc on x64 or arm64 (it has none for musl: holepunchto/fs-native-extensions#15)",
      { cause: err },
    );
  }
}
