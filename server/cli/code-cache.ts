// Loads one CommonJS bundle with V8's code cache: the bytecode V8 compiled
// for it in an earlier start, kept in a file, so that this start does not
// parse and compile the same code again. Node 22 does this for every module
// (module.enableCompileCache); Node 20, which the project supports, has only
// the vm API it is built on here.
//
// Why not the v8-compile-cache package: it replaces the module loader's
// compile step for every CommonJS module the process loads, keeps its cache
// in the shared temporary folder unless told otherwise (where another local
// user could plant bytecode), saves only when the process exits, and checks
// nothing of what it reads back.
import { isAscii } from "node:buffer";
import { createHash } from "node:crypto";
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { open, rename } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import vm from "node:vm";
import { writableOnlyByUs } from "../private-dir.js";

/** How the code cache served this load: `used`; `absent` (none yet, or none that only this user could have written); `rejected` (damaged, or made by another V8 or with other flags). */
export type CodeCacheStatus = "used" | "absent" | "rejected";

/** What `save` did: `unchanged` when the cache was used; `no folder` when the cache folder's parent does not exist (it is not made for a cache). */
export type CodeCacheSaved = "written" | "unchanged" | "no folder";

export interface CachedRequire<T> {
  exports: T;
  status: CodeCacheStatus;
  /** The cache file of this bundle, for this Node version and architecture. */
  cacheFile: string;
  /**
   * Writes the code cache when it was absent or rejected. Call it once the
   * bundle has done its work: the cache then holds every function compiled
   * so far, not only the top level. V8 makes it on this thread, at once.
   * Rejects when the folder is not this user's alone.
   */
  save(): Promise<CodeCacheSaved>;
}

/** The cache file begins with the SHA-256 of what follows it. */
const DIGEST_BYTES = 32;
/** A partial file older than this was left by a crash, not written by a start now. */
const ABANDONED_PARTIAL_MS = 10 * 60_000;

/**
 * Requires `file` (a self-contained CommonJS bundle) with the code cache in
 * `cacheDir`, a folder made on save (0700) inside an existing one.
 *
 * A cache is bytecode this process would run, and V8 (in Node's release
 * builds) checks little of it: a damaged file can crash the process, and a
 * planted one runs. So it is read only from a real folder and file that
 * belong to this user and no one else may write to, through one open file
 * (no link followed), and only when its own SHA-256 matches. The file is
 * named for the bundle's content, Node's version and the architecture: V8
 * checks its own version and flags, but of the source only its length, so
 * a changed bundle of the same length must never meet the old cache.
 *
 * The bundle must not use `import()`: a script compiled by vm has no import
 * callback unless given one, and Node 20 loses that callback in code
 * compiled from a cache (scripts/bundle.ts refuses such a bundle).
 */
export function requireWithCodeCache<T>(file: string, cacheDir: string): CachedRequire<T> {
  const bytes = readFileSync(file);
  const key = createHash("sha256").update(bytes).update(`\0${process.version}\0${process.arch}`).digest("hex").slice(0, 32);
  // The bundle is ASCII (scripts/bundle.ts escapes the rest): read as
  // Latin-1 it is the same string, made without decoding UTF-8.
  const source = isAscii(bytes) ? bytes.toString("latin1") : bytes.toString("utf8");
  const name = path.basename(file);
  const cacheFile = path.join(cacheDir, `${name}.${key}.v8`);
  const read = readCache(cacheDir, cacheFile);
  const script = new vm.Script(wrap(source), { filename: file, ...(read.data ? { cachedData: read.data } : {}) });
  const status: CodeCacheStatus = read.damaged || script.cachedDataRejected ? "rejected" : read.data ? "used" : "absent";
  const module = { exports: {} as T };
  const run = script.runInThisContext() as (exports: T, require: NodeJS.Require, module: { exports: T }, filename: string, dirname: string) => void;
  run(module.exports, createRequire(file), module, file, path.dirname(file));
  return {
    exports: module.exports,
    status,
    cacheFile,
    async save() {
      if (status === "used") return "unchanged";
      try {
        mkdirSync(cacheDir, { mode: 0o700 });
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === "ENOENT") return "no folder";
        if (code !== "EEXIST") throw err;
      }
      // Checked again: it may have been made, or replaced, since the load.
      if (folderState(cacheDir) !== "private") {
        throw new Error(`${cacheDir} is not a folder of this user's alone: no code cache is read from or written to it`);
      }
      const data = script.createCachedData();
      await writeDurably(cacheDir, cacheFile, Buffer.concat([createHash("sha256").update(data).digest(), data]));
      removeOthers(cacheDir, name, cacheFile);
      return "written";
    },
  };
}

/** The cache's bytes, when there is a sound one; `damaged` when a file is there whose digest does not match. */
function readCache(cacheDir: string, cacheFile: string): { data?: Buffer; damaged?: boolean } {
  if (folderState(cacheDir) !== "private") return {};
  let fd: number;
  try {
    // Non-blocking: a FIFO put in its place must not hold the start.
    fd = openSync(cacheFile, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    // None yet, or a link in its place: compile as without a cache; a save replaces it.
    return {};
  }
  try {
    const found = fstatSync(fd);
    if (!found.isFile() || !writableOnlyByUs(found)) return {};
    const bytes = readFileSync(fd);
    const data = bytes.subarray(DIGEST_BYTES);
    const sound = bytes.length > DIGEST_BYTES && createHash("sha256").update(data).digest().equals(bytes.subarray(0, DIGEST_BYTES));
    return sound ? { data } : { damaged: true };
  } finally {
    closeSync(fd);
  }
}

/** Whether `dir` is missing, a real folder of this user's alone, or anything else. */
function folderState(dir: string): "missing" | "private" | "shared" {
  let found;
  try {
    found = lstatSync(dir);
  } catch {
    return "missing";
  }
  return found.isDirectory() && writableOnlyByUs(found) ? "private" : "shared";
}

/** Writes `file` aside, flushes it and renames it into place: a start never reads half a cache, even after a power cut. */
async function writeDurably(dir: string, file: string, bytes: Buffer): Promise<void> {
  const partial = `${file}.${process.pid}.partial`;
  const handle = await open(partial, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o600);
  try {
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(partial, file);
  } catch (err) {
    // Else every start that fails here (a folder in the cache's place) would leave one more.
    rmSync(partial, { force: true });
    throw err;
  }
  const folder = await open(dir, constants.O_RDONLY);
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}

/**
 * One cache per bundle: an upgraded bundle's or Node's old one would
 * otherwise stay for good (two versions sharing a folder take turns), and
 * so would a partial file a crash left; another start's partial file, still
 * being written, is left alone.
 */
function removeOthers(dir: string, name: string, keep: string): void {
  try {
    for (const other of readdirSync(dir)) {
      if (!other.startsWith(`${name}.`)) continue;
      const found = path.join(dir, other);
      // Gone meanwhile (another start renamed its partial file): nothing to remove.
      const modified = lstatSync(found, { throwIfNoEntry: false })?.mtimeMs;
      if (modified === undefined) continue;
      const stale = other.endsWith(".v8") ? found !== keep : other.endsWith(".partial") && Date.now() - modified > ABANDONED_PARTIAL_MS;
      if (stale) rmSync(found, { force: true });
    }
  } catch {
    // Tidying only: the cache itself is written, and the next save tries again.
  }
}

/** The function a CommonJS module's code runs in, as Node's own loader wraps it. */
function wrap(source: string): string {
  return `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
}
