import { randomUUID } from "node:crypto";
import type { RequestHandler, Response } from "express";
import type { Logger } from "pino";
import { onRequestEnd } from "./request-end.js";

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** The request id of a response, for log lines written while handling it. */
export function requestId(res: Response): string | undefined {
  const id: unknown = res.locals.requestId;
  return typeof id === "string" ? id : undefined;
}

/** The id of a request: the caller's X-Request-Id when it is a well-formed one, else a new UUID. */
export function requestIdFor(incoming: string | string[] | undefined): string {
  return typeof incoming === "string" && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/**
 * One JSON log line per request, when it ends, with a request id that is
 * also sent back as X-Request-Id (a sane incoming one is kept, so a trace
 * can cross services). Of the request itself, only the method, path,
 * status and duration are logged: headers and bodies carry tokens and
 * never reach the log, and
 * neither does a query string (no operation takes one, so it says nothing
 * useful, and a client may have put a token there): it is logged as `?…`.
 * Who asked is logged as the peer's address (a proxy's, behind one) and,
 * for an embedded token, the token's id (as `agentd token list` shows it):
 * enough to tell who paused whom, never the token.
 *
 * A plain `close` hook on the one process logger: pino-http's per-request
 * child logger was a large share of the server's time under load.
 */
export function requestLogger(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const id = requestIdFor(req.headers["x-request-id"]);
    res.locals.requestId = id;
    res.setHeader("X-Request-Id", id);
    const started = performance.now();
    // Read now: once the socket is destroyed (an aborted request), Node no longer knows it.
    const client = req.socket.remoteAddress;
    onRequestEnd(res, (answered) => {
      const line = {
        reqId: id,
        method: req.method,
        url: withoutQuery(req.originalUrl),
        client,
        ...(typeof res.locals.tokenId === "string" ? { tokenId: res.locals.tokenId } : {}),
        // None for a request that ended before its answer began: Node's
        // default 200 would read as an answer the client never got.
        ...(res.headersSent ? { statusCode: res.statusCode } : {}),
        responseTime: Math.round((performance.now() - started) * 10) / 10,
      };
      if (!answered) logger.warn(line, "request aborted");
      else if (res.statusCode >= 500) logger.error(line, "request failed");
      else logger.info(line, "request completed");
    });
    next();
  };
}

function withoutQuery(url: string): string {
  const at = url.indexOf("?");
  return at < 0 ? url : `${url.slice(0, at)}?…`;
}
