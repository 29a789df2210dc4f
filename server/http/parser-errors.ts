import type { IncomingMessage } from "node:http";
import type { Server } from "node:https";
import type { Duplex } from "node:stream";
import { afterParseError, endConnection } from "./connection-queue.js";
import type { ErrorBody } from "./errors.js";
import { requestIdFor } from "./logging.js";

/** Requests Node's own HTTP parser refuses before Express ever sees them. */
const PARSER_ERRORS: Readonly<Record<string, [number, string, string]>> = {
  HPE_HEADER_OVERFLOW: [431, "Request Header Fields Too Large", "request header fields too large"],
  ERR_HTTP_REQUEST_TIMEOUT: [408, "Request Timeout", "request timeout"],
};

/** ERR_TLS_HANDSHAKE_TIMEOUT and the like from Node, ERR_SSL_* from OpenSSL. */
function isTlsFailure(err: NodeJS.ErrnoException): boolean {
  return err.code !== undefined && (err.code.startsWith("ERR_TLS_") || err.code.startsWith("ERR_SSL_"));
}

function answer(socket: Duplex, headerLines: string, status: number, reason: string, error: string): void {
  const body = JSON.stringify({ error } satisfies ErrorBody);
  endConnection(
    socket,
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n${headerLines}` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * Even a request too broken for Express (bad framing, control characters,
 * oversized headers, an unknown method, CONNECT) gets the contract's Error
 * body, then the connection is ended (and closed after a grace, if the
 * client keeps its side open): nothing after a parse error can be
 * trusted. Behind requests still being handled, those are answered instead,
 * and then the connection closed; in the rest of a body already answered,
 * nothing is (connection-queue.ts).
 */
export function answerClientErrors(server: Server, headers: Readonly<Record<string, string>>): void {
  const headerLines = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A TLS failure, the handshake time-out included, also arrives here once
    // a clientError listener exists. Such a socket has no TLS session to
    // answer over: an "answer" would wait for a handshake that never comes
    // and keep the connection (and its file descriptor) open for good.
    if (err.code === "ECONNRESET" || isTlsFailure(err) || !socket.writable) {
      socket.destroy();
      return;
    }
    const after = afterParseError(socket);
    if (after === "close") socket.destroy();
    if (after !== "answer") return;
    const [status, reason, error] = PARSER_ERRORS[err.code ?? ""] ?? [400, "Bad Request", "invalid request"];
    answer(socket, headerLines, status, reason, error);
  });
  server.on("connect", (req: IncomingMessage, socket: Duplex) => {
    // Node hands a CONNECT's connection over untimed, its bytes unread: what
    // it sends is discarded, so its end is seen, and it is ended with a
    // grace (endConnection) once answered, here or behind the request in flight.
    socket.resume();
    const after = afterParseError(socket);
    if (after === "close") socket.destroy();
    if (after !== "answer") return;
    // A 405 names what is allowed (RFC 9110): the API's methods. The request
    // parsed, so its answer has an id, as every other such answer has.
    const id = requestIdFor(req.headers["x-request-id"]);
    answer(socket, `${headerLines}Allow: GET, POST\r\nX-Request-Id: ${id}\r\n`, 405, "Method Not Allowed", "method not allowed");
  });
}
