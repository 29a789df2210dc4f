// The embedded database in its own thread (server/db/threaded-pglite.ts), as
// the server opens it: the same answers and failures as PGlite in this
// thread, transactions across the messages, an event loop that turns while a
// statement runs, and a thread that never keeps a finished process alive.
import { spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../devkit/root.js";
import { openPglite } from "../server/db/pglite.js";
import { DatabaseUnavailableError, type Database } from "../server/db/sql.js";
import { startPgliteThread } from "../server/db/threaded-pglite.js";
import { turnsDuring } from "./helpers/event-loop.js";

const SCHEMA = `CREATE TABLE t (id integer PRIMARY KEY, label text NOT NULL CHECK (label <> ''), at timestamptz, doc jsonb, raw bytea, big bigint, ok boolean)`;

describe("the embedded database in its own thread", () => {
  let threaded: Database;
  let inThread: Database;
  beforeAll(async () => {
    [threaded, inThread] = await Promise.all([startPgliteThread().open(null), openPglite(null)]);
    for (const db of [threaded, inThread]) await db.query(SCHEMA);
  });
  afterAll(async () => {
    await Promise.all([threaded?.close(), inThread?.close()]);
  });

  /** The same call on both, each from a fresh table. */
  async function both<T>(run: (db: Database) => Promise<T>): Promise<[T, T]> {
    const results: T[] = [];
    for (const db of [threaded, inThread]) {
      await db.query("DELETE FROM t");
      results.push(await run(db));
    }
    return [results[0]!, results[1]!];
  }

  /** What a rejection carries that a caller can look at. */
  async function failure(promise: Promise<unknown>): Promise<Record<string, unknown>> {
    try {
      await promise;
    } catch (err) {
      const { name, message } = err as Error;
      return { name, message, ...(err as object) };
    }
    throw new Error("expected a rejection");
  }

  it("gives the values PGlite gives in this thread: parameters and rows of every type the stores use", async () => {
    const [a, b] = await both(async (db) => {
      await db.query("INSERT INTO t VALUES ($1, $2, $3, $4, $5, $6, $7), (2, 'two', NULL, NULL, NULL, NULL, NULL)", [
        1,
        "ünïcode ✓",
        new Date("2026-11-25T10:00:00.123Z"),
        JSON.stringify({ nested: [1, "x", null] }),
        new Uint8Array([0, 1, 255]),
        "9007199254740993",
        true,
      ]);
      return db.query("SELECT * FROM t ORDER BY id");
    });
    expect(a).toEqual(b);
    expect(a[0]).toMatchObject({ id: 1, label: "ünïcode ✓", doc: { nested: [1, "x", null] }, ok: true });
    expect(a[0]!.at).toBeInstanceOf(Date);
    expect(a[0]!.raw).toBeInstanceOf(Uint8Array);
  });

  it("rejects with PostgreSQL's own error, its code, constraint and detail kept", async () => {
    const [a, b] = await both(async (db) => {
      await db.query("INSERT INTO t (id, label) VALUES (1, 'one')");
      return failure(db.query("INSERT INTO t (id, label) VALUES (1, 'again')"));
    });
    expect(a).toEqual(b);
    expect(a).toMatchObject({ code: "23505", constraint: "t_pkey", detail: "Key (id)=(1) already exists." });
    expect(await failure(threaded.query("SELECT * FROM nowhere"))).toMatchObject({ code: "42P01", message: 'relation "nowhere" does not exist' });
  });

  it("commits a transaction when its function resolves, and rolls it back with the function's own error when it throws", async () => {
    await threaded.query("DELETE FROM t");
    const value = await threaded.transaction(async (tx) => {
      await tx.query("INSERT INTO t (id, label) VALUES (1, 'kept')");
      // A nested call joins the outer transaction, as PGlite does.
      await tx.transaction((inner) => inner.query("INSERT INTO t (id, label) VALUES (2, 'kept too')"));
      return "done";
    });
    expect(value).toBe("done");
    const thrown = new Error("the caller's own failure");
    await expect(
      threaded.transaction(async (tx) => {
        await tx.query("INSERT INTO t (id, label) VALUES (3, 'undone')");
        throw thrown;
      }),
    ).rejects.toBe(thrown);
    // A statement that fails inside rolls the whole transaction back.
    await expect(
      threaded.transaction(async (tx) => {
        await tx.query("INSERT INTO t (id, label) VALUES (4, 'undone')");
        await tx.query("INSERT INTO t (id, label) VALUES (5, '')");
      }),
    ).rejects.toMatchObject({ code: "23514" });
    expect(await threaded.query("SELECT id FROM t ORDER BY id")).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it("lets a statement outside a transaction wait for it, so it never sees half of one", async () => {
    await threaded.query("DELETE FROM t");
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inserted!: () => void;
    const half = new Promise<void>((resolve) => (inserted = resolve));
    const transaction = threaded.transaction(async (tx) => {
      await tx.query("INSERT INTO t (id, label) VALUES (1, 'first')");
      inserted();
      await held;
      await tx.query("INSERT INTO t (id, label) VALUES (2, 'second')");
    });
    await half;
    const count = threaded.query<{ n: number }>("SELECT count(*)::int AS n FROM t");
    release();
    await transaction;
    expect(await count).toEqual([{ n: 2 }]);
  });

  it("loads rows with COPY in one transaction: all of them, or none when one is refused", async () => {
    await threaded.query("DELETE FROM t");
    await threaded.copyIn("t", ["id", "label"], "1\tone\n2\ttwo\\nlines\n");
    expect(await threaded.query("SELECT id, label FROM t ORDER BY id")).toEqual([
      { id: 1, label: "one" },
      { id: 2, label: "two\nlines" },
    ]);
    await expect(threaded.copyIn("t", ["id", "label"], "3\tthree\n1\tagain\n")).rejects.toMatchObject({ code: "23505" });
    expect(await threaded.query("SELECT count(*)::int AS n FROM t")).toEqual([{ n: 2 }]);
  });

  it("leaves the event loop free while a statement runs, which PGlite in this thread does not", async () => {
    const count = (db: Database) => () => db.query("SELECT count(*) FROM generate_series(1, 3000000)");
    expect(await turnsDuring(count(inThread))).toBeLessThanOrEqual(2);
    expect(await turnsDuring(count(threaded))).toBeGreaterThan(10);
  });
});

describe("the embedded database's thread, opened and closed", () => {
  it("fails to open as PGlite in this thread does, naming the folder and the system's reason", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "agentd-thread-"));
    try {
      const data = path.join(dir, "data");
      await mkdir(path.join(data, "pgdata"), { recursive: true });
      await chmod(path.join(data, "pgdata"), 0o500);
      const [a, b] = await Promise.all([startPgliteThread().open(data).catch((err: Error) => err), openPglite(data).catch((err: Error) => err)]);
      expect(a).toBeInstanceOf(Error);
      expect((a as Error).message).toBe((b as Error).message);
      expect((a as Error).message).toMatch(/^cannot open the embedded database in .*pgdata: EACCES: permission denied$/);
      // Its cause crosses too: the system error, with its code.
      expect((a as Error).cause).toMatchObject({ code: "EACCES", message: ((b as Error).cause as Error).message });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("once closed, answers every call with DatabaseUnavailableError (503), not a hang", async () => {
    const db = await startPgliteThread().open(null);
    await db.close();
    const closed = db.query("SELECT 1");
    await expect(closed).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await expect(db.transaction(() => Promise.resolve())).rejects.toBeInstanceOf(DatabaseUnavailableError);
  });

  it("answers a refusal for want of resources (a full disk, SQLSTATE 53100) with DatabaseUnavailableError (503), as on PostgreSQL", async () => {
    const db = await startPgliteThread().open(null);
    try {
      const full = await db.query("DO $$ BEGIN RAISE EXCEPTION 'full' USING ERRCODE = '53100'; END $$").catch((e: unknown) => e);
      expect(full).toBeInstanceOf(DatabaseUnavailableError);
      expect((full as Error).cause).toMatchObject({ code: "53100" });
      const other = await db.query("DO $$ BEGIN RAISE EXCEPTION 'bad' USING ERRCODE = '22023'; END $$").catch((e: unknown) => e);
      expect(other).not.toBeInstanceOf(DatabaseUnavailableError);
      expect(other).toMatchObject({ code: "22023" });
    } finally {
      await db.close();
    }
  });

  it("takes a thread that owes an answer and gives none for the stall time-out for stuck: its calls fail, it is ended, and `stopped` says why", async () => {
    const thread = startPgliteThread(undefined, { stallTimeoutMs: 500 });
    const db = await thread.open(null);
    let stoppedWith: Error | null = null;
    void thread.stopped.then((reason) => (stoppedWith = reason));
    // Answers keep coming, each in less than the time-out, for longer than it in all: not stuck.
    for (let i = 0; i < 8; i++) await db.query("SELECT pg_sleep(0.1)");
    expect(stoppedWith).toBeNull();

    // A statement PGlite cannot be interrupted in stands for one that never ends (a full disk's).
    const stuck = await db.query("SELECT pg_sleep(5)").catch((e: unknown) => e);
    expect(stuck).toBeInstanceOf(DatabaseUnavailableError);
    expect((stuck as Error).message).toMatch(/has not answered for 500 ms, and is taken for stuck/);
    await expect(thread.stopped).resolves.toBe(stuck);
    await expect(db.query("SELECT 1")).rejects.toBe(stuck);
    await db.close();
  });

  it("does not count against the stall time-out the time a transaction's caller takes between statements, nor a frozen event loop", async () => {
    const thread = startPgliteThread(undefined, { stallTimeoutMs: 500 });
    const db = await thread.open(null);
    let stoppedWith: Error | null = null;
    void thread.stopped.then((reason) => (stoppedWith = reason));
    try {
      await db.query("CREATE TABLE held (n integer)");
      // A statement from outside waits behind the transaction's lock meanwhile.
      let outside: Promise<unknown> | undefined;
      await db.transaction(async (tx) => {
        await tx.query("INSERT INTO held VALUES (1)");
        outside = db.query("SELECT count(*)::int AS n FROM held");
        await new Promise((resolve) => setTimeout(resolve, 1500));
        await tx.query("INSERT INTO held VALUES (2)");
      });
      await expect(outside).resolves.toEqual([{ n: 2 }]);

      // This thread frozen for three time-outs while a short statement runs
      // (as a stopped process or a suspended machine would be): its answer
      // waits in the queue, and the watchdog must not read the gap as silence.
      const answer = db.query("SELECT pg_sleep(0.2)");
      const frozenUntil = Date.now() + 1500;
      while (Date.now() < frozenUntil);
      await expect(answer).resolves.toHaveLength(1);
      await new Promise((resolve) => setTimeout(resolve, 1200));
      expect(stoppedWith).toBeNull();
    } finally {
      await db.close();
    }
  });

  it("does not report a thread closed on purpose as stopped", async () => {
    const thread = startPgliteThread(undefined, { stallTimeoutMs: 500 });
    const db = await thread.open(null);
    await db.close();
    const reported = await Promise.race([thread.stopped, new Promise((resolve) => setTimeout(() => resolve("not reported"), 1500))]);
    expect(reported).toBe("not reported");
  });

  it("keeps a process alive while it owes an answer, and never once idle", async () => {
    // A process that opens the database and queries it without closing: it
    // must print the answer (the thread held it alive meanwhile) and then
    // end by itself (the idle thread does not hold it).
    const module = JSON.stringify(pathToFileURL(path.join(repoRoot, "server/db/threaded-pglite.ts")).href);
    // A value that cannot be sent to the thread is refused at once, and leaves nothing owed.
    const script = `import { startPgliteThread } from ${module};
      const db = await startPgliteThread().open(null);
      await db.query("SELECT $1::text", [() => "not a value"]).then(() => process.stdout.write("sent?\\n"), (err) => process.stdout.write(err.name + "\\n"));
      db.query("SELECT pg_sleep(0.3), 'answered' AS word").then((rows) => process.stdout.write(rows[0].word + "\\n"));`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => {
      // Only a hang should reach this bound: a loaded CI machine, at half
      // its usual speed, has needed much of it to start tsx and PGlite.
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        resolve(null);
      }, 90_000);
      child.on("exit", (exitCode) => {
        clearTimeout(timer);
        resolve(exitCode);
      });
    });
    expect({ code, out }).toEqual({ code: 0, out: "DataCloneError\nanswered\n" });
  });
});
