// The data-directory lock (server/admin/lock.ts): a kernel lock on run/lock,
// inside the data directory's private run/ folder. Only live processes hold
// it (kill -9 frees it, whatever file it leaves), and nothing another user
// or process does outside run/ (the old abstract socket name bound first,
// files beside run/) keeps agentd from taking it.
//
// Other processes are real child processes running the compiled lock
// (dist/, built by the test run's global setup). The other user is `nobody`:
// that needs root, as the tests run here and in CI.
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../devkit/root.js";
import { DataDirBusyError, lockDataDir } from "../server/admin/lock.js";
import { ownDataDir } from "./helpers/data-dir.js";
import { startTestServer } from "./helpers/server.js";

const LOCK_MODULE = path.join(repoRoot, "dist", "server", "admin", "lock.js");
const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;

/** Children started here and how they end: each test kills those still running. */
const children = new Map<ChildProcess, Promise<unknown>>();

/**
 * Runs `script` (CommonJS, its arguments in process.argv.slice(1)) in a
 * child process, as `uid` when given; resolves with its first line of output
 * while it keeps running.
 */
async function child(script: string, args: string[], uid?: number): Promise<{ said: string; process: ChildProcess; exited: Promise<unknown> }> {
  const proc = spawn(process.execPath, ["-e", script, ...args], {
    stdio: ["ignore", "pipe", "inherit"],
    ...(uid === undefined ? {} : { uid, gid: uid }),
  });
  const exited = new Promise((resolve) => proc.once("exit", resolve));
  children.set(proc, exited);
  const said = await new Promise<string>((resolve, reject) => {
    let out = "";
    proc.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      if (out.includes("\n")) resolve(out.slice(0, out.indexOf("\n")));
    });
    void exited.then(() => reject(new Error(`the child exited without a word: ${out}`)));
  });
  return { said, process: proc, exited };
}

/** Another process taking the lock of `dataDir` and holding it until killed: says `locked`, or the error's name and message. */
function lockInChild(dataDir: string, uid?: number) {
  const script = `
    import(${JSON.stringify(LOCK_MODULE)})
      .then(({ lockDataDir }) => lockDataDir(process.argv[1]))
      .then(() => { console.log("locked"); setInterval(() => {}, 1 << 30); },
            (err) => console.log(err.name + ": " + err.message));`;
  return child(script, [dataDir], uid);
}

/** The abstract socket name the lock used to be, which any local user could bind first. */
function oldAbstractName(dataDir: string): string {
  return "agentd-" + createHash("sha256").update(realpathSync(dataDir)).digest("hex").slice(0, 32);
}

describe("the data-directory lock", () => {
  let tmp: string;
  let n = 0;
  const fresh = () => path.join(tmp, `data-${++n}`);

  beforeAll(() => {
    tmp = mkdtempSync(path.join(tmpdir(), "agentd-lock-"));
    // Other users may pass through to their own test folders.
    chmodSync(tmp, 0o711);
  });
  afterEach(async () => {
    for (const [proc, exited] of children) {
      proc.kill("SIGKILL");
      await exited;
    }
    children.clear();
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it("keeps out every other holder while a process lives, and passes to a waiter on release", async () => {
    const dir = fresh();
    const holder = await lockInChild(dir);
    expect(holder.said).toBe("locked");
    await expect(lockDataDir(dir)).rejects.toThrow(new DataDirBusyError(`the data directory ${dir} is in use by another agentd process`));
    expect((await lockInChild(dir)).said).toBe(`DataDirBusyError: the data directory ${dir} is in use by another agentd process`);
    holder.process.kill("SIGTERM");
    await holder.exited;

    // In one process too, and a waiter takes it as soon as it is released.
    const first = await lockDataDir(dir);
    await expect(lockDataDir(dir)).rejects.toBeInstanceOf(DataDirBusyError);
    const waiting = lockDataDir(dir, { waitMs: 60_000 });
    expect((await lockInChild(dir)).said).toMatch(/^DataDirBusyError/);
    await first.release();
    const second = await waiting;
    expect((await lockInChild(dir)).said).toMatch(/^DataDirBusyError/);
    await second.release();
  });

  it("is free at once after its holder is killed with SIGKILL, though the lock file stays", async () => {
    const dir = fresh();
    const holder = await lockInChild(dir);
    expect(holder.said).toBe("locked");
    holder.process.kill("SIGKILL");
    await holder.exited;
    expect(existsSync(path.join(dir, "run", "lock"))).toBe(true);
    const lock = await lockDataDir(dir);
    expect((await lockInChild(dir)).said).toMatch(/^DataDirBusyError/);
    await lock.release();
  });

  /**
   * Squats `dir` outside run/ (the name the old lock bound, held by another
   * process, as `uid` when given; files beside run/), then checks the lock
   * is taken and a server starts all the same. What the squatter got when it
   * tried to open run/lock: "opened", or the error's code.
   */
  async function squatThenStart(dir: string, uid?: number): Promise<string> {
    await ownDataDir(dir);
    // run/ as agentd makes it, and leaves it.
    await (await lockDataDir(dir)).release();
    const squatter = await child(
      `const [name, lockFile] = process.argv.slice(1);
       let open;
       try { require("node:fs").closeSync(require("node:fs").openSync(lockFile, "a")); open = "opened"; } catch (err) { open = err.code; }
       require("node:net").createServer().listen("\\0" + name, () => console.log(JSON.stringify({ bound: true, open })));`,
      [oldAbstractName(dir), path.join(dir, "run", "lock")],
      uid,
    );
    const { bound, open } = JSON.parse(squatter.said);
    expect(bound).toBe(true);
    // The abstract name is taken indeed.
    await expect(
      new Promise((resolve, reject) => net.createServer().once("error", reject).listen("\0" + oldAbstractName(dir), () => resolve("bound"))),
    ).rejects.toMatchObject({ code: "EADDRINUSE" });
    for (const name of ["lock", ".lock", "agentd.lock", "run.lock", "admin.sock"]) writeFileSync(path.join(dir, name), "squatted\n");

    const lock = await lockDataDir(dir);
    await lock.release();
    const server = await startTestServer({ AGENTD_DATA_DIR: dir });
    try {
      expect((await server.call("GET", "/agents")).status).toBe(200);
      expect((await lockInChild(dir)).said).toMatch(/^DataDirBusyError/);
    } finally {
      await server.close();
    }
    return open;
  }

  it("is taken, and a server starts, whatever squatters hold outside run/: the old abstract socket name, files beside it", async () => {
    await squatThenStart(fresh());
  });

  it.skipIf(!asRoot)("is taken, and a server starts, when another user holds the old abstract socket name; that user cannot even reach the lock file", async () => {
    // The data directory is 0700.
    expect(await squatThenStart(fresh(), NOBODY)).toBe("EACCES");
  });

  it("refuses a run/ that is a link, naming the data directory and the system's reason", async () => {
    const dir = fresh();
    const elsewhere = path.join(tmp, "elsewhere");
    mkdirSync(elsewhere, { recursive: true, mode: 0o700 });
    mkdirSync(dir, { mode: 0o700 });
    symlinkSync(elsewhere, path.join(dir, "run"));
    await expect(lockDataDir(dir)).rejects.toThrow(`cannot open the data directory ${dir}: ENOTDIR: not a directory (${path.join(dir, "run")})`);
    expect(existsSync(path.join(elsewhere, "lock"))).toBe(false);
  });

  // Found by an operator's walk: `agentd token create` run as root before the first start, in
  // the service user's data directory, left root's run/ and database there, and the service
  // could not open them.
  it.skipIf(!asRoot)("refuses another user's data directory to root, and makes nothing inside it", async () => {
    const dir = fresh();
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, NOBODY, NOBODY);
    await expect(lockDataDir(dir)).rejects.toThrow(
      `cannot open the data directory ${dir}: ${dir} belongs to another user (uid ${NOBODY}), not to root: run agentd as its owner`,
    );
    expect(readdirSync(dir)).toEqual([]);
  });

  // Found by review: refusing every user a folder it does not own broke volumes shared through
  // their group (Kubernetes' fsGroup, OpenShift's arbitrary user ids).
  it.skipIf(!asRoot)("lets a user other than root work in a data directory it may write to but does not own", async () => {
    const dir = fresh();
    mkdirSync(dir, { mode: 0o777 });
    chmodSync(dir, 0o777);
    const holder = await lockInChild(dir, NOBODY);
    expect(holder.said).toBe("locked");
    holder.process.kill();
  });

  it.skipIf(!asRoot)("refuses a run/ made by another user, even to root, in a data directory others can write to", async () => {
    const dir = fresh();
    mkdirSync(dir);
    chmodSync(dir, 0o777);
    // The other user makes run/ first and could hold a lock inside it: refused, not taken over.
    const made = await child(`require("node:fs").mkdirSync(process.argv[1], { mode: 0o777 }); console.log("made");`, [path.join(dir, "run")], NOBODY);
    expect(made.said).toBe("made");
    await expect(lockDataDir(dir)).rejects.toThrow(
      `cannot open the data directory ${dir}: ${path.join(dir, "run")} belongs to another user (uid ${NOBODY}), not to this process's (uid 0)`,
    );
  });
});
