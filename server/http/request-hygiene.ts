import type { IncomingMessage } from "node:http";
import type { RequestHandler } from "express";
import typeis from "type-is";
import { HttpProblem } from "./errors.js";

const CONDITIONAL_HEADERS = ["if-none-match", "if-modified-since", "if-match", "if-unmodified-since", "if-range"];

/**
 * What every request must satisfy before the contract is even consulted,
 * in one middleware (each Express layer costs on every request):
 * - HTTP/1.1 requires a Host header. Node would refuse a request without one
 *   itself, with an empty 400; serve.ts turns that check off so the refusal
 *   carries the contract's Error body like every other. A Host that is not
 *   one, or a Host or Content-Type sent twice, is refused too (unclearHeader).
 * - The API has no conditional requests (no ETags, no dates): without this,
 *   `If-None-Match: *` would turn any 200 into a 304 the contract does not have.
 * - The contract's GETs take no body: one that carries a body, whatever its
 *   type or size, is refused as invalid (400, as the mocks answer too), not
 *   ignored when it is JSON and refused with a 413 or 415 the GETs do not
 *   have when it is not.
 * - The Content-Type of a request without a body is dropped (below).
 * - A request that carries a body must say it is JSON. Otherwise a body with
 *   no or another Content-Type would be silently ignored, and a pause with a
 *   reason sent as text would succeed without its reason.
 * - A body whose Content-Length is over the limit is answered 413 at once.
 *   The body parser refuses it too, but only after reading all of it: tens
 *   of megabytes read before the answer, or no answer until the request
 *   time-out when the client never sends them. The body is still read off
 *   behind the answer, for a bounded time (unread-body.ts), as Node
 *   discards what a finished response left unread:
 *   a client that sends it without waiting would otherwise meet a closed
 *   connection while writing, and never read the 413. Only a client that
 *   waits for 100 Continue, and so sends nothing, has its connection closed.
 */
export function requestHygiene(bodyLimitBytes: number): RequestHandler {
  return (req, res, next) => {
    const headers = req.headers;
    if (req.httpVersion === "1.1" && !headers.host) {
      next(new HttpProblem(400, "invalid request", [{ location: "header", path: "Host", message: "is required" }]));
      return;
    }
    const unclear = unclearHeader(req);
    if (unclear !== null) {
      next(new HttpProblem(400, "invalid request", [unclear]));
      return;
    }
    for (const name of CONDITIONAL_HEADERS) {
      if (headers[name] !== undefined) delete headers[name];
    }
    withoutTypeOfNoBody(req);
    bodyRefusal(req, (refused) => {
      if (refused !== null) {
        next(refused);
        return;
      }
      if (declaredTooLarge(req, bodyLimitBytes)) {
        if (req.headers.expect?.toLowerCase() === "100-continue") res.setHeader("Connection", "close");
        next(new HttpProblem(413, "payload too large"));
        return;
      }
      next();
    });
  };
}

/**
 * The detail of a Host or Content-Type sent twice, or a Host that is not a
 * host and port (RFC 9112 requires a 400 for both), or null. Node would
 * keep the first of two and drop the second silently, where a proxy in
 * front may have read the other: a pause whose JSON type came second was
 * refused, and one whose came first succeeded.
 */
function unclearHeader(req: IncomingMessage): { location: "header"; path: string; message: string } | null {
  // Counted in the raw headers, where Node keeps every line: on every
  // request, so without allocating, and most names are neither.
  const raw = req.rawHeaders;
  let hosts = 0;
  let types = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === "host") hosts++;
    else if (name.length === 12 && name.toLowerCase() === "content-type") types++;
  }
  if (hosts > 1) return { location: "header", path: "Host", message: "must be sent once" };
  if (types > 1) return { location: "header", path: "Content-Type", message: "must be sent once" };
  const host = req.headers.host;
  if (host !== undefined && host !== "" && !HOST.test(host)) {
    return { location: "header", path: "Host", message: "must be a host name or address, with an optional port" };
  }
  return null;
}

/**
 * RFC 9112's Host: RFC 3986's host (an IP literal in brackets, or a
 * reg-name, which an IPv4 address also matches) and an optional port. Not
 * the WHATWG URL parser, which refuses names it would take for a mistyped
 * IPv4 address (`node.10`) and IPv6 zone ids.
 */
const HOST = /^(?:\[[0-9A-Za-z:.%_~-]+\]|(?:[A-Za-z0-9._~!$&'()*+,;=-]|%[0-9A-Fa-f]{2})*)(?::[0-9]*)?$/;

/**
 * Calls back with the answer to a request whose body is refused before the
 * contract is consulted (a body on a GET, or one not said to be JSON), or
 * null. At once, except for a chunked body so refused: it is waited for, as
 * one that ends with no chunk is no body, like `Content-Length: 0` (a
 * client that streams an empty pause sends no Content-Type, and the 17.05
 * client's pause has none). Such a refusal then waits for the body's first
 * byte, or the request time-out's 408: no longer a hold than any chunked
 * body's. Shared with the mocks' front door, so both mocks refuse what the
 * server refuses.
 */
export function bodyRefusal(req: IncomingMessage, then: (refused: HttpProblem | null) => void): void {
  const refused = bodyOnGet(req) ?? bodyNotJson(req);
  if (refused === null || !sentChunked(req)) {
    then(refused);
    return;
  }
  void endsEmpty(req).then((empty) => {
    if (!empty) {
      then(refused);
      return;
    }
    delete req.headers["transfer-encoding"];
    delete req.headers["content-type"];
    req.headers["content-length"] = "0";
    then(null);
  });
}

/**
 * Whether a body ends before its first byte. One that does not is left
 * flowing with no reader: it is read off and dropped while the refusal is
 * answered, as Node would drop it once the answer is sent.
 */
function endsEmpty(req: IncomingMessage): Promise<boolean> {
  return new Promise((resolve) => {
    const settle = (empty: boolean) => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("close", onClose);
      resolve(empty);
    };
    const onData = () => settle(false);
    const onEnd = () => settle(true);
    const onClose = () => settle(false);
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("close", onClose);
  });
}

/** Whether the request's Content-Length already says its body is over the limit. */
export function declaredTooLarge(req: IncomingMessage, limitBytes: number): boolean {
  const length = req.headers["content-length"];
  return length !== undefined && Number(length) > limitBytes;
}

/** Whether the body comes chunked: no length said beforehand. */
export function sentChunked(req: IncomingMessage): boolean {
  return req.headers["transfer-encoding"] !== undefined && req.headers["content-length"] === undefined;
}

/** Whether the request says it carries a body (chunked, or a length over 0). */
export function hasBody(req: IncomingMessage): boolean {
  return req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
}

/**
 * Drops the Content-Type of a request that carries no body, which describes
 * nothing: `fetch(url, { method: "POST", body: "" })` sends `text/plain`
 * with `Content-Length: 0`, and the validator would answer 415 to a pause or
 * an unpause the contract lets a client send without a body (Prism's
 * mock takes it).
 */
function withoutTypeOfNoBody(req: IncomingMessage): void {
  if (req.headers["content-type"] !== undefined && !hasBody(req)) delete req.headers["content-type"];
}

/**
 * The answer to a request whose body is not said to be JSON (415), null for
 * any other request. Matched as Express's req.is matches it (type-is), so
 * that the mocks' front door, which Prism would let a `+json` type or text
 * through, refuses exactly what the server refuses.
 */
function bodyNotJson(req: IncomingMessage): HttpProblem | null {
  if (!hasBody(req) || typeis(req, ["application/json"]) !== false) return null;
  return new HttpProblem(415, "unsupported media type");
}

/**
 * The answer to a GET that carries a body, null for any other request.
 * Shared with the stateful mock's front door, which must answer it before
 * Prism's proxy (whose client cannot forward a GET with a body) does.
 */
function bodyOnGet(req: IncomingMessage): HttpProblem | null {
  if (req.method !== "GET" || !hasBody(req)) return null;
  return new HttpProblem(400, "invalid request", [{ location: "body", path: "", message: "must be absent: a GET takes no body" }]);
}
