// A start that fails late (here: the admin socket cannot be made) leaves
// nothing behind: no API port, no operator port, no data-directory lock, so
// the operator fixes the cause and starts again.
import { mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { pino } from "pino";
import { describe, expect, it, onTestFinished } from "vitest";
import { freePort } from "../devkit/ports.js";
import { ownDataDir } from "./helpers/data-dir.js";
import { freshPostgres, postgresTestUrl } from "./helpers/databases.js";
import { startTestServer } from "./helpers/server.js";

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: "127.0.0.1" });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** A new migrated data directory (test/helpers/data-dir.ts), removed when the test ends. */
async function dataDirForTest(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  await ownDataDir(dir);
  return dir;
}

describe("a start that fails at the admin socket", () => {
  it("closes the API and operator ports it would have used and releases the lock; the next start succeeds", async () => {
    const dir = await dataDirForTest("agentd-start-failure-");
    // A folder that holds a file where the socket goes: it cannot be replaced by a socket.
    mkdirSync(path.join(dir, "run", "admin.sock"), { recursive: true });
    writeFileSync(path.join(dir, "run", "admin.sock", "keep"), "");
    const [port, opsPort] = [await freePort(), await freePort()];
    const env = { AGENTD_DATA_DIR: dir, AGENTD_PORT: String(port), AGENTD_OPS_PORT: String(opsPort) };

    await expect(startTestServer(env)).rejects.toThrow(`cannot listen on the admin socket ${path.join(dir, "run", "admin.sock")}`);
    expect({ api: await listening(port), operator: await listening(opsPort) }).toEqual({ api: false, operator: false });

    await rm(path.join(dir, "run", "admin.sock"), { recursive: true });
    const server = await startTestServer(env);
    try {
      expect((await server.call("GET", "/agents")).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

// Found by an operator: a first start that failed at its port had made the
// one-time admin token, and no later start showed it.
describe("a first start that cannot listen", () => {
  it("makes no admin token: the start that listens makes it and shows it", async () => {
    const dir = await dataDirForTest("agentd-first-start-");
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const { port } = taken.address() as net.AddressInfo;
    const env = { AGENTD_DATA_DIR: dir, AGENTD_ADMIN_TOKEN: "" };
    try {
      await expect(startTestServer({ ...env, AGENTD_PORT: String(port) })).rejects.toThrow(`cannot listen on 127.0.0.1:${port}`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
    const server = await startTestServer(env);
    try {
      const token = server.running.adminToken;
      expect(token).toMatch(/^[A-Za-z0-9_-]{32,}$/);
      expect((await server.call("GET", "/agents", { token })).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

// Skipped only on a developer's machine without PostgreSQL, saying so (postgresTestUrl throws in CI).
if (postgresTestUrl() === undefined) console.warn("AGENTD_TEST_DATABASE_URL is not set: skipping the certificate-before-migrations test on PostgreSQL");
describe.runIf(postgresTestUrl() !== undefined)("a start with a certificate it cannot read, on PostgreSQL", () => {
  it("fails before it migrates or writes the database: an upgrade with a typo leaves the schema for the old version", async () => {
    const database = await freshPostgres();
    try {
      const env = { AGENTD_DATABASE_URL: database.location, AGENTD_TLS_CERT: "/nonexistent/cert.pem", AGENTD_TLS_KEY: "/nonexistent/key.pem" };
      await expect(startTestServer(env)).rejects.toThrow("AGENTD_TLS_CERT");
      const db = await database.open();
      expect(await db.query("SELECT to_regclass('schema_migrations') AS migrations")).toEqual([{ migrations: null }]);
    } finally {
      await database.cleanup();
    }
  });
});

// From the operator walkthrough and its review: rotating AGENTD_ADMIN_TOKEN must not be undone by an old configuration.
describe("a start with an AGENTD_ADMIN_TOKEN a later value replaced", () => {
  it("fails, saying so, and the current token keeps working", async () => {
    const dir = await dataDirForTest("agentd-rotation-");
    const [old, current] = ["old-admin-token-0123456789", "current-admin-token-0123456789"];
    await (await startTestServer({ AGENTD_DATA_DIR: dir, AGENTD_ADMIN_TOKEN: old })).close();
    // The rotation says so in the log, with the revoked token's id (as token list shows it).
    const lines: { msg: string; revokedTokenIds?: string[] }[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string }) });
    await (await startTestServer({ AGENTD_DATA_DIR: dir, AGENTD_ADMIN_TOKEN: current }, undefined, logger)).close();
    expect(lines.filter((line) => line.revokedTokenIds !== undefined)).toEqual([
      expect.objectContaining({ msg: "AGENTD_ADMIN_TOKEN has a new value: the previous value's token is revoked", revokedTokenIds: [expect.stringMatching(/^[0-9a-f]{12}$/)] }),
    ]);
    await expect(startTestServer({ AGENTD_DATA_DIR: dir, AGENTD_ADMIN_TOKEN: old })).rejects.toThrow("AGENTD_ADMIN_TOKEN: this value was replaced by a newer one");
    const server = await startTestServer({ AGENTD_DATA_DIR: dir, AGENTD_ADMIN_TOKEN: current });
    try {
      expect((await server.call("GET", "/agents", { token: current })).status).toBe(200);
      expect((await server.call("GET", "/agents", { token: old })).status).toBe(401);
    } finally {
      await server.close();
    }
  });
});
