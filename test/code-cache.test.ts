// The serve command's loader (server/cli/code-cache.ts) on small CommonJS
// bundles of the test's own: what it reads, when V8 takes the cache, and
// that a changed bundle never runs the old bundle's code. Each load runs in
// a process of its own, as each start of the server does: within one
// process, V8 answers a second compile of the same source from memory and
// never looks at the cache.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CodeCacheStatus } from "../server/cli/code-cache.js";
import { repoRoot } from "../devkit/root.js";

// The compiled module (the test run's global setup builds dist/), run by plain node.
const loader = pathToFileURL(path.join(repoRoot, "dist", "server", "cli", "code-cache.js")).href;

let dir: string;
let cacheDir: string;
let bundle: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "agentd-code-cache-"));
  // The cache's folder is made inside an existing data directory, never with it.
  mkdirSync(path.join(dir, "data"), { mode: 0o700 });
  cacheDir = path.join(dir, "data", "code-cache");
  bundle = path.join(dir, "bundle.cjs");
  // Enough functions that V8 has something to cache, and a require relative to the bundle.
  writeFileSync(path.join(dir, "sibling.cjs"), "module.exports = { sibling: 'beside' };\n");
  writeBundle("first");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A bundle whose `answer()` returns `word`: two words of one length give two bundles of one length. */
function writeBundle(word: string): void {
  const functions = Array.from({ length: 50 }, (_, i) => `function f${i}(x) { return x * ${i} + ${i}; }`).join("\n");
  writeFileSync(
    bundle,
    `${functions}\nexports.answer = () => ${JSON.stringify(word)} + f7(0);\nexports.sibling = require("./sibling.cjs").sibling;\nexports.where = __filename;\n`,
  );
}

interface Load {
  status: CodeCacheStatus;
  cacheFile: string;
  answer: string;
  sibling: string;
  where: string;
  /** What save() said, or its error's message. */
  saved: string;
}

/** Loads the bundle in a new node process, then saves the cache, as `agentd serve` does. */
function load(): Load {
  const script = `
    import { requireWithCodeCache } from ${JSON.stringify(loader)};
    const loaded = requireWithCodeCache(${JSON.stringify(bundle)}, ${JSON.stringify(cacheDir)});
    const saved = await loaded.save().catch((err) => err.message);
    const { answer, sibling, where } = loaded.exports;
    console.log(JSON.stringify({ status: loaded.status, cacheFile: loaded.cacheFile, answer: answer(), sibling, where, saved }));
  `;
  return JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" })) as Load;
}

/** The next load finds the cache as `status` says, still runs the bundle, and writes a cache that the load after it uses. */
function expectReplaced(status: CodeCacheStatus): void {
  const next = load();
  expect(next.status).toBe(status);
  expect(next.answer).toBe("first7");
  expect(next.saved).toBe("written");
  expect(load().status).toBe("used");
}

describe("requireWithCodeCache", () => {
  it("runs the bundle as CommonJS, with require, __filename and exports", () => {
    const loaded = load();
    expect(loaded.answer).toBe("first7");
    expect(loaded.sibling).toBe("beside");
    expect(loaded.where).toBe(bundle);
  });

  it("reads a bundle that is not all ASCII as UTF-8, with and without its cache", () => {
    // The shipped bundle is ASCII and is read as Latin-1, the same string made faster.
    writeBundle("héllo ✓");
    expect(load()).toMatchObject({ status: "absent", answer: "héllo ✓7" });
    expect(load()).toMatchObject({ status: "used", answer: "héllo ✓7" });
  });

  it("has no cache on the first load and writes one, private; the next load uses it", () => {
    const first = load();
    expect(first.status).toBe("absent");
    expect(first.saved).toBe("written");
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
    expect(statSync(first.cacheFile).mode & 0o777).toBe(0o600);
    expect(readdirSync(cacheDir)).toEqual([path.basename(first.cacheFile)]);

    const second = load();
    expect(second.status).toBe("used");
    expect(second.answer).toBe("first7");
    expect(second.saved).toBe("unchanged");
  });

  it("never runs an earlier bundle's code: a changed bundle of the same length gets a cache of its own, and the old one goes", () => {
    const before = load();
    const length = readFileSync(bundle).length;
    writeBundle("other");
    expect(readFileSync(bundle).length).toBe(length);

    const after = load();
    expect(after.status).toBe("absent");
    expect(after.cacheFile).not.toBe(before.cacheFile);
    expect(after.answer).toBe("other7");
    expect(readdirSync(cacheDir)).toEqual([path.basename(after.cacheFile)]);
  });

  it("compiles as without a cache when V8 rejects the file, and replaces it", () => {
    const first = load();
    // A sound digest of data that is no cache of V8's: V8 itself refuses it.
    const garbage = Buffer.alloc(4096, 7);
    writeFileSync(first.cacheFile, Buffer.concat([createHash("sha256").update(garbage).digest(), garbage]));
    expectReplaced("rejected");
  });

  it("finds a cache damaged in its body, which V8 itself would run and crash on, and replaces it", () => {
    const first = load();
    const bytes = readFileSync(first.cacheFile);
    // Past the digest, in the middle of V8's data.
    const at = 32 + Math.floor((bytes.length - 32) / 2);
    bytes[at] = bytes[at]! ^ 0xff;
    writeFileSync(first.cacheFile, bytes);
    expectReplaced("rejected");
  });

  it("takes a file too short to hold its digest for a damaged one", () => {
    const first = load();
    writeFileSync(first.cacheFile, Buffer.alloc(32));
    expectReplaced("rejected");
  });

  it("reads no cache file that others may write to, and replaces it", () => {
    const first = load();
    chmodSync(first.cacheFile, 0o620);
    expectReplaced("absent");
    expect(statSync(first.cacheFile).mode & 0o777).toBe(0o600);
  });

  it("leaves no partial file behind when the cache cannot take its place", () => {
    const first = load();
    rmSync(first.cacheFile);
    mkdirSync(first.cacheFile);
    expect(load().saved).toMatch(/EISDIR|ENOTEMPTY|EEXIST/);
    expect(readdirSync(cacheDir).filter((name) => name.endsWith(".partial"))).toEqual([]);
  });

  it("reads no cache through a link: neither a linked file nor a linked folder", () => {
    const first = load();
    const elsewhere = path.join(dir, "elsewhere");
    mkdirSync(elsewhere, { mode: 0o700 });
    const moved = path.join(elsewhere, path.basename(first.cacheFile));
    renameSync(first.cacheFile, moved);
    symlinkSync(moved, first.cacheFile);
    expect(load().status).toBe("absent");

    rmSync(cacheDir, { recursive: true, force: true });
    symlinkSync(elsewhere, cacheDir);
    const linked = load();
    expect(linked.status).toBe("absent");
    expect(linked.saved).toMatch(/not a folder of this user's alone/);
  });

  it("neither reads nor writes a cache in a folder others may write to", () => {
    const first = load();
    expect(first.saved).toBe("written");
    chmodSync(cacheDir, 0o770);
    const shared = load();
    expect(shared.status).toBe("absent");
    expect(shared.answer).toBe("first7");
    expect(shared.saved).toMatch(/not a folder of this user's alone/);
  });

  it("makes no data directory for a cache: without one, there is none", () => {
    rmSync(path.join(dir, "data"), { recursive: true, force: true });
    const loaded = load();
    expect(loaded.answer).toBe("first7");
    expect(loaded.saved).toBe("no folder");
    expect(existsSync(path.join(dir, "data"))).toBe(false);
  });

  it("fails the save, not the load, where the cache cannot be written", () => {
    // A file where the cache's folder should be.
    writeFileSync(cacheDir, "");
    const loaded = load();
    expect(loaded.answer).toBe("first7");
    expect(loaded.saved).toMatch(/not a folder of this user's alone/);
  });
});
