import { createHash } from "node:crypto";
import { mkdirSync, realpathSync } from "node:fs";
import net from "node:net";

/** Held by the one process that has the embedded database open. */
export interface DataDirLock {
  release(): Promise<void>;
}

export class DataDirBusyError extends Error {
  override readonly name = "DataDirBusyError";
}

/**
 * PGlite is single-process: two processes writing one data directory would
 * corrupt it. The lock is a Linux abstract Unix socket named after the data
 * directory: binding it is atomic, and the kernel releases it when its
 * process dies, even on kill -9, so a crash never leaves a stale lock.
 */
export async function lockDataDir(dataDir: string, { waitMs = 0 } = {}): Promise<DataDirLock> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const name = "\0agentd-" + createHash("sha256").update(realpathSync(dataDir)).digest("hex").slice(0, 32);
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const server = await bind(name);
      return {
        release: () => new Promise<void>((resolve) => server.close(() => resolve())),
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
      if (Date.now() >= deadline) {
        throw new DataDirBusyError(`the data directory ${dataDir} is in use by another agentd process`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

function bind(name: string): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((socket) => socket.destroy());
    server.once("error", reject);
    server.listen(name, () => {
      server.off("error", reject);
      // The lock must not keep the event loop alive on its own.
      server.unref();
      resolve(server);
    });
  });
}
