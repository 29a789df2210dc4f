// The API's graceful stop: no new connections, the requests in flight
// answered, then every connection closed, each once it has no request left.
import type { ServerResponse } from "node:http";
import type { Server } from "node:https";
import type { Logger } from "pino";

export interface GracefulStop {
  /** Stops listening and resolves once every connection has closed: at the latest after `timeoutMs`, when those still open are cut. */
  stop(timeoutMs: number): Promise<void>;
}

/**
 * Tracks `server`'s answers from now on, so that a stop can tell those still
 * to be written to close their connection. Node's close() closes only the
 * connections idle at that moment: a keep-alive client busy then went on
 * being served, answer after answer, until the time-out cut its connection,
 * with a request in flight whose answer (a pause's 204, the pause made) was
 * lost.
 */
export function gracefulStop(server: Server, logger: Logger): GracefulStop {
  const unanswered = new Set<ServerResponse>();
  let stopping = false;
  // Before the app's listener, so that an answer the app writes at once
  // already closes its connection.
  server.prependListener("request", (_req, res: ServerResponse) => {
    if (stopping) {
      res.shouldKeepAlive = false;
      return;
    }
    unanswered.add(res);
    res.once("close", () => unanswered.delete(res));
  });
  return {
    stop: (timeoutMs) =>
      new Promise<void>((resolve) => {
        stopping = true;
        for (const res of unanswered) if (!res.headersSent) res.shouldKeepAlive = false;
        unanswered.clear();
        const force = setTimeout(() => {
          logger.warn("requests still in flight at the end of AGENTD_SHUTDOWN_TIMEOUT: their connections are closed unanswered");
          server.closeAllConnections();
        }, timeoutMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
