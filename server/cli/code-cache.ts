// Loads one CommonJS bundle with V8's code cache: the bytecode V8 compiled
// for it in an earlier start, kept in a file, so that this start does not
// parse and compile the same code again. Node 22 does this for every module
// (module.enableCompileCache); Node 20, which the project supports, has only
// the vm API it is built on here.
//
// Why not the v8-compile-cache package: it replaces the module loader's
// compile step for every CommonJS module the process loads, keeps its cache
// in the shared temporary folder unless told otherwise (where another local
// user could plant bytecode), and saves only when the process exits.
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { rename, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import vm from "node:vm";

/** How the code cache served this load: `used` (accepted), `absent` (none yet), `rejected` (made by another V8 or with other flags). */
export type CodeCacheStatus = "used" | "absent" | "rejected";

export interface CachedRequire<T> {
  exports: T;
  status: CodeCacheStatus;
  /** The cache file of this bundle, for this Node version and architecture. */
  cacheFile: string;
  /**
   * Writes the code cache when it was absent or rejected. Call it once the
   * bundle has done its work: the cache then holds every function compiled
   * so far, not only the top level. `unchanged` when it was used; `no
   * folder` when the cache folder's parent does not exist (it is not made
   * for a cache). Rejects when the folder is not private to this user.
   */
  save(): Promise<"written" | "unchanged" | "no folder">;
}

/**
 * Requires `file` (a self-contained CommonJS bundle) with the code cache in
 * `cacheDir`, a folder made on save (0700) inside an existing one. A cache
 * is bytecode this process would run: it is read only from a folder of
 * this user's that no one else may write to. The cache file is named
 * for the bundle's content, Node's version and the architecture: V8 checks
 * its own version and flags, but of the source only its length, so a
 * changed bundle of the same length must never meet the old cache.
 *
 * The bundle must not use `import()`: V8's code cache loses what a dynamic
 * import needs in Node 20 (scripts/bundle.ts refuses such a bundle).
 */
export function requireWithCodeCache<T>(file: string, cacheDir: string): CachedRequire<T> {
  const source = readFileSync(file, "utf8");
  const key = createHash("sha256").update(source).update(`\0${process.version}\0${process.arch}`).digest("hex").slice(0, 32);
  const name = path.basename(file);
  const cacheFile = path.join(cacheDir, `${name}.${key}.v8`);
  const folder = folderState(cacheDir);
  let cachedData: Buffer | undefined;
  if (folder === "private") {
    try {
      cachedData = readFileSync(cacheFile);
    } catch {
      // None yet (or unreadable): compile as without a cache, and save one later.
    }
  }
  const script = new vm.Script(wrap(source), { filename: file, ...(cachedData ? { cachedData } : {}) });
  const status: CodeCacheStatus = cachedData === undefined ? "absent" : script.cachedDataRejected ? "rejected" : "used";
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
      // Checked again: it may have been made since the load.
      if (folderState(cacheDir) !== "private") {
        throw new Error(`${cacheDir} is not a folder of this user's that only it may write to: no code cache is read from or written to it`);
      }
      // Written aside and renamed: a start never reads half a cache.
      const partial = `${cacheFile}.${process.pid}.partial`;
      await writeFile(partial, script.createCachedData(), { mode: 0o600 });
      await rename(partial, cacheFile);
      // One cache per bundle: an upgraded bundle's or Node's old one, or a
      // partial file a crash left, would otherwise stay for good.
      for (const other of readdirSync(cacheDir)) {
        if (other.startsWith(`${name}.`) && path.join(cacheDir, other) !== cacheFile) await rm(path.join(cacheDir, other), { force: true });
      }
      return "written";
    },
  };
}

/** Whether `dir` is missing, this user's alone (no write for group or others), or not. */
function folderState(dir: string): "missing" | "private" | "shared" {
  let found;
  try {
    found = statSync(dir);
  } catch {
    return "missing";
  }
  const mine = process.getuid === undefined || found.uid === process.getuid();
  return found.isDirectory() && mine && (found.mode & 0o022) === 0 ? "private" : "shared";
}

/** The function a CommonJS module's code runs in, as Node's own loader wraps it. */
function wrap(source: string): string {
  return `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
}
