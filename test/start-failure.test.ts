// A start that fails late (here: the admin socket cannot be made) leaves
// nothing behind: no API port, no operator port, no data-directory lock, so
// the operator fixes the cause and starts again.
import { mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../devkit/ports.js";
import { ownDataDir } from "./helpers/data-dir.js";
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

describe("a start that fails at the admin socket", () => {
  let dir: string;
  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it("closes the API and operator ports it would have used and releases the lock; the next start succeeds", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agentd-start-failure-"));
    await ownDataDir(dir);
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
