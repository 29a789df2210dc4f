import { chmodSync, rmSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import type { Logger } from "pino";
import { canonicalSinkName, sinkLogName } from "../events/sink.js";
import { PathFailure } from "../failure.js";
import type { AdminRequest, AdminResponse } from "./protocol.js";
import { runDir } from "./run-dir.js";

/** Where a server listens for admin commands, inside its data directory. */
export function adminSocketPath(dataDir: string): string {
  return path.join(runDir(dataDir), "admin.sock");
}

const MAX_REQUEST_BYTES = 64 * 1024 * 1024;

export interface AdminChannel {
  close(): Promise<void>;
}

/**
 * Serves admin commands on a Unix socket that only the owner of the data
 * directory can reach (the socket lives in run/, which taking the lock made
 * and checked to be this user's private 0700 folder, and is itself 0600).
 * Only the holder of the data-directory lock calls this, so a leftover
 * socket file from a crash is safe to replace.
 */
export async function startAdminChannel(
  socketPath: string,
  handle: (request: AdminRequest) => Promise<AdminResponse>,
  logger: Logger,
): Promise<AdminChannel> {
  const server = net.createServer((socket) => {
    let buffer = "";
    socket.setEncoding("utf8");
    socket.on("error", () => socket.destroy());
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      if (buffer.length > MAX_REQUEST_BYTES) {
        socket.end(JSON.stringify({ ok: false, error: "request too large" }) + "\n");
        return;
      }
      const newline = buffer.indexOf("\n");
      if (newline < 0) return;
      const line = buffer.slice(0, newline);
      socket.pause();
      answer(line).then(
        (response) => socket.end(JSON.stringify(response) + "\n"),
        () => socket.destroy(),
      );
    });
  });

  async function answer(line: string): Promise<AdminResponse> {
    try {
      const request = JSON.parse(line) as AdminRequest;
      logger.info({ op: request.op }, "admin command");
      const response = await handle(request);
      // What an operator deleted stays on record: the sink (its URL without the query), the event, how many.
      if ((request.op === "events.drop" || request.op === "events.drop-event") && response.ok && (response.dropped ?? 0) > 0) {
        logger.warn({ op: request.op, sink: sinkLogName(canonicalSinkName(request.sink)), ...(request.op === "events.drop-event" ? { event: request.event } : {}), dropped: response.dropped }, "undelivered events dropped");
      }
      if (request.op === "import.replace" && response.ok && (response.removed ?? 0) > 0) {
        logger.warn({ op: request.op, imported: response.imported, removed: response.removed }, "agents removed by an import");
      }
      return response;
    } catch (err) {
      logger.error({ err }, "admin command failed");
      return { ok: false, error: err instanceof Error ? err.message : "admin command failed" };
    }
  }

  try {
    rmSync(socketPath, { force: true });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socketPath, () => resolve());
    });
    chmodSync(socketPath, 0o600);
  } catch (err) {
    server.close();
    throw new PathFailure("listen on the admin socket", socketPath, err);
  }
  server.unref();

  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        rmSync(socketPath, { force: true });
      }),
  };
}

/**
 * Sends one command to the server holding `socketPath`. Resolves undefined
 * when no server is listening there, so the caller can open the database itself.
 */
export function callAdminChannel(socketPath: string, request: AdminRequest): Promise<AdminResponse | undefined> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let buffer = "";
    let connected = false;
    socket.setEncoding("utf8");
    socket.on("connect", () => {
      connected = true;
      socket.write(JSON.stringify(request) + "\n");
    });
    socket.on("data", (chunk: string) => (buffer += chunk));
    socket.on("end", () => {
      try {
        resolve(JSON.parse(buffer) as AdminResponse);
      } catch {
        reject(new Error("the running server sent an unreadable admin answer"));
      }
    });
    socket.on("error", (err: NodeJS.ErrnoException) => {
      // Nothing listens there (or the path cannot hold a socket: the lock, taken next, names the problem).
      if (!connected && ["ENOENT", "ECONNREFUSED", "ENOTDIR", "EACCES"].includes(err.code ?? "")) resolve(undefined);
      else reject(err);
    });
  });
}
