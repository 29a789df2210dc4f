// The API's graceful stop: no new connections, the requests in flight
// answered, then every connection closed, each once it has no request left.
import type { ServerResponse } from "node:http";
import type { Server } from "node:https";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";

export interface GracefulStop {
  /** Stops listening and resolves once every connection has closed: at the latest after `timeoutMs`, when those still open are cut. */
  stop(timeoutMs: number): Promise<void>;
}

/**
 * Tracks `server`'s connections and their answers not yet written, so
 * that a stop can tell those answers to close their connection. Node's
 * close() closes only the connections idle at that moment: a keep-alive
 * client busy then went on being served, answer after answer, until the
 * time-out cut its connection, with a request in flight whose answer (a
 * pause's 204, the pause made) was lost.
 *
 * Kept per connection and dropped when it closes: Node never closes the
 * answers of pipelined requests still queued on a connection that dies.
 */
export function gracefulStop(server: Server, logger: Logger): GracefulStop {
  const unanswered = new Map<Duplex, Set<ServerResponse>>();
  // Every connection, from before its TLS handshake: closeAllConnections()
  // reaches only those that got as far as HTTP.
  const connections = new Set<Socket>();
  let stopping = false;
  server.on("connection", (socket: Socket) => {
    connections.add(socket);
    socket.once("close", () => connections.delete(socket));
  });
  // Before the app's listener, so that an answer the app writes at once
  // already closes its connection.
  server.prependListener("request", (req, res: ServerResponse) => {
    if (stopping) {
      res.shouldKeepAlive = false;
      return;
    }
    const answers = answersOf(req.socket);
    answers.add(res);
    res.once("close", () => answers.delete(res));
  });
  /** The connection's answers not yet written, kept until it closes. */
  function answersOf(socket: Duplex): Set<ServerResponse> {
    let answers = unanswered.get(socket);
    if (answers === undefined) {
      answers = new Set();
      unanswered.set(socket, answers);
      socket.once("close", () => unanswered.delete(socket));
    }
    return answers;
  }
  return {
    stop: (timeoutMs) =>
      new Promise<void>((resolve) => {
        stopping = true;
        for (const answers of unanswered.values()) for (const res of answers) if (!res.headersSent) res.shouldKeepAlive = false;
        unanswered.clear();
        const force = setTimeout(() => {
          logger.warn({ connections: connections.size }, "connections still open at the end of AGENTD_SHUTDOWN_TIMEOUT (requests in flight, or clients that sent none): closed");
          server.closeAllConnections();
          for (const socket of connections) socket.destroy();
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
