// In front of Prism, in both mocks: what Prism cannot do. It delays answers on demand
// (`--delay`, or `Prefer: delay=<ms>` for one answer; Prism has no latency
// option), so loading states and time-outs can be built; and it gives every
// answer Prism produces itself (problem+json, for a malformed `Prefer` say)
// the contract's `Error` body, so a front end meets one error shape whichever
// layer answered. A JSON body goes through the server's own body parser
// first and is refused as the server refuses it (malformed, not an object
// or an array, too large; an array only in the stateless mock), since Prism
// does otherwise (parseJsonThenForward), and a GET
// that carries a body gets the server's 400 (Prism's proxy would fail to
// forward it). What Prism cannot take goes straight to the service behind
// it, which answers as the server does (notForPrism); the stateless mock,
// with no service, answers it here as the server would. Where Prism's mock
// alone would answer otherwise than the server, it takes the server's
// side: a body not said to be JSON gets 415, Accept is ignored, a trailing
// slash is taken, and an example asked of a 204 is a 400 naming `Prefer`.
// It answers CORS preflights itself, at once, and the mocks' own control
// path, POST /__mock/reset (RESET_PATH). Everything else passes through,
// streamed.
import http from "node:http";
import type { AddressInfo } from "node:net";
import contentType from "content-type";
import express, { type RequestHandler } from "express";
import { describeFailure } from "../server/failure.js";
import { hostPort } from "../server/host-port.js";
import { ERROR_IDS, HttpProblem, toProblem, type ErrorBody } from "../server/http/errors.js";
import { isPreflight } from "../server/http/cors.js";
import { bodyRefusal } from "../server/http/request-hygiene.js";
import { requestIdFor } from "../server/http/logging.js";
import { API_HEADERS } from "../server/http/response-headers.js";
import { bodyBytesChecked, bodyNotUtf8 } from "../server/http/well-formed-body.js";
import { forcing, type Forcing } from "./prefer.js";

export const MAX_DELAY_MS = 10_000;

export interface FrontDoorOptions {
  host: string;
  port: number;
  /** Prism's own address, `http://127.0.0.1:<port>`. */
  prism: string;
  /**
   * The service behind Prism's proxy, `http://127.0.0.1:<port>/1.0` (the
   * stateful mock): what Prism cannot take goes there. Null for the
   * stateless mock, where Prism mocks from the examples.
   */
  upstream: string | null;
  /** The delay of every answer that does not ask for its own. */
  delayMs: number;
  /** The server's AGENTD_BODY_LIMIT: a larger JSON body gets the server's 413. */
  bodyLimitBytes: number;
  /**
   * What `POST /__mock/reset` does: puts the mock's state back as it was at
   * start. The stateless mock, which keeps none, passes one that does nothing.
   */
  reset: () => Promise<void>;
}

/**
 * The mock's own control path, outside the contract (whose paths all begin
 * with /agents): a front end's test suite resets the state between tests
 * without restarting the mock and Prism.
 */
export const RESET_PATH = "/__mock/reset";

export interface FrontDoor {
  url: string;
  close(): Promise<void>;
}

/** `Prefer` without its `delay` preference, and that delay: null when absent, NaN when not a valid one. */
function takeDelay(prefer: string | undefined): { rest: string | undefined; delayMs: number | null } {
  if (prefer === undefined) return { rest: undefined, delayMs: null };
  let delayMs: number | null = null;
  const rest = prefer
    .split(",")
    .map((part) => part.trim())
    .filter((part) => {
      const match = /^delay\s*=\s*"?([^"]*)"?$/i.exec(part);
      if (match === null) return part !== "";
      delayMs = /^\d+$/.test(match[1]!) && Number(match[1]) <= MAX_DELAY_MS ? Number(match[1]) : NaN;
      return false;
    });
  return { rest: rest.length > 0 ? rest.join(", ") : undefined, delayMs };
}

interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
}

/**
 * What a `Prefer` (or its query form, `forced`) asked for that the contract
 * does not have, from Prism's 404 for it: a status the operation never
 * answers (`code=409` on a GET) or an example name its answer lacks. Asked
 * with a status, the unknown example is Prism's 500 naming no example.
 * Null for any other problem, a path off the contract included.
 */
function unknownPreference(problem: Problem, forced: Forcing | null): { asked: "code" | "example"; message: string } | null {
  const example = typeof forced?.example === "string" ? forced.example : undefined;
  if (problem.type?.endsWith("#UNKNOWN") === true && problem.title?.includes("#NOT_FOUND") === true && example !== undefined) {
    return { asked: "example", message: noExampleNamed(answerNamed(forced), example) };
  }
  if (problem.type?.endsWith("#NOT_FOUND") !== true) return null;
  const code = /status code (\d+) is not defined/.exec(problem.detail ?? "")?.[1];
  if (code !== undefined) return { asked: "code", message: `the operation has no ${code} answer in the contract` };
  const named = /exampleKey: (.*) does not exist/.exec(problem.detail ?? "")?.[1];
  if (named !== undefined) return { asked: "example", message: noExampleNamed(answerNamed(forced), named) };
  return null;
}

/** What the error detail says of an example name `answer` ("the 409 answer") lacks. */
function noExampleNamed(answer: string, name: string): string {
  return `${answer} has no example named ${JSON.stringify(name)} in the contract`;
}

/** "the 409 answer" when a status was forced, else "the answer". */
function answerNamed(forced: Forcing | null): string {
  return typeof forced?.code === "string" ? `the ${forced.code} answer` : "the answer";
}

/** Where a forced preference was asked, as an error detail names it: the header, or that preference's query parameter. */
function askedWhere(forced: Forcing | null, asked: "code" | "example"): { location: "header" | "query"; path: string } {
  return forced?.askedIn === "query" ? { location: "query", path: `__${asked}` } : { location: "header", path: "Prefer" };
}

/** The contract's answer for a problem+json of Prism's own, to a request that forced `forced`. */
function contractAnswer(problem: Problem, status: number, forced: Forcing | null): { status: number; body: ErrorBody } {
  const unknown = unknownPreference(problem, forced);
  // A 404 would read as a wrong URL: it is the header that asks for the impossible.
  if (unknown !== null) return { status: 400, body: { error: ERROR_IDS[400]!, details: [{ ...askedWhere(forced, unknown.asked), message: unknown.message }] } };
  const message = problem.detail || problem.title || "rejected by the mock";
  // 422: Prism could not read the `Prefer` header (`code=abc`).
  if (status === 422 || (status >= 400 && status < 500 && ERROR_IDS[status] === undefined)) {
    return { status: 400, body: { error: ERROR_IDS[400]!, details: [{ ...askedWhere(forced, "code"), message }] } };
  }
  if (status === 400) return { status, body: { error: ERROR_IDS[400]!, details: [{ location: "body", path: "", message }] } };
  const known = ERROR_IDS[status];
  return known === undefined ? { status: 500, body: { error: ERROR_IDS[500]! } } : { status, body: { error: known } };
}

/**
 * CORS as Prism answers it, for the answers that do not come from Prism:
 * any origin, named back with credentials allowed, so a browser page
 * reads these as it reads Prism's.
 */
function cors(req: http.IncomingMessage): http.OutgoingHttpHeaders {
  const origin = req.headers.origin;
  // Prism exposes every header; these are the ones the server exposes (cors.ts), and Prism's
  // sl-violations: a page reads on a mock no header it could not read on the server.
  const exposed = { "access-control-expose-headers": "sl-violations, x-request-id, retry-after, www-authenticate" };
  if (origin === undefined) return { "access-control-allow-origin": "*", ...exposed };
  return { "access-control-allow-origin": origin, "access-control-allow-credentials": "true", vary: "Origin", ...exposed };
}

/** The request's id, as the server gives it (the client's own when well formed, else a new UUID). */
function requestId(req: http.IncomingMessage): http.OutgoingHttpHeaders {
  return { "x-request-id": requestIdFor(req.headers["x-request-id"]) };
}

/**
 * The headers of an answer the front door makes itself: CORS as Prism's and
 * the request's id, and in the stateful mock, which answers as the server
 * does, the server's own (API_HEADERS) too.
 */
function ownHeaders(req: http.IncomingMessage, to: Targets): http.OutgoingHttpHeaders {
  return to.service === null ? { ...cors(req), ...requestId(req) } : { ...cors(req), ...API_HEADERS, ...requestId(req) };
}

function answer(res: http.ServerResponse, status: number, body: ErrorBody, headers: http.OutgoingHttpHeaders): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/**
 * The server's own JSON body parser (express.json, strict, with its limit),
 * run here first: Prism answers malformed JSON in its own shape, and passes
 * `null`, `0` or `false` on as no body at all, which the service behind it
 * would take for a pause without a reason. A body the parser refuses gets
 * the server's answer (toProblem); any other request goes on to Prism, a
 * parsed body as the bytes it came in.
 */
function parseJsonThenForward(parser: JsonParser, req: http.IncomingMessage, res: http.ServerResponse, to: Targets, prefer: string | undefined): void {
  parser.parse(req as never, res as never, (err?: unknown) => {
    if (err !== undefined) {
      const problem = toProblem(err);
      answer(res, problem.status, problem.body(), ownHeaders(req, to));
      return;
    }
    // Bytes that are not UTF-8 would reach Prism, and the service behind it, as U+FFFD.
    const notUtf8 = bodyNotUtf8(req);
    if (notUtf8 !== null) {
      answer(res, notUtf8.status, notUtf8.body(), ownHeaders(req, to));
      return;
    }
    const read = parser.bodies.get(req);
    const body = read === undefined ? undefined : asUtf8(req, read);
    const parsed = (req as { body?: unknown }).body;
    // The parser takes an array (JSON's other container), and the stateless
    // mock's answer to one would be Prism's canned 400 naming the wrong
    // place; every body of the contract is an object. (The stateful mock's
    // service answers it as the server does, after the route and the token.)
    if (body !== undefined && Array.isArray(parsed) && to.service === null) {
      answer(res, 400, { error: ERROR_IDS[400]!, details: [{ location: "body", path: "", message: "must be object" }] }, ownHeaders(req, to));
      return;
    }
    if (body !== undefined && tooDeepForPrism(parsed) && bypassPrism("too deep", req, res, to, body)) return;
    // The server answers JSON whatever Accept says; Prism's mock answers 406 to one without JSON.
    delete req.headers.accept;
    req.url = withoutTrailingSlash(req.url ?? "/");
    // An answer of Prism's mock would carry the contract's example id, the
    // same on every answer: the stateless mock's, and the stateful mock's
    // when forced. The stateful mock's service gives its own otherwise.
    const prismAnswers = to.service === null || forcing(prefer, req.url) !== null;
    forward(req, res, to.prism, prefer, body, prismAnswers ? requestId(req) : {});
  });
}

/**
 * A parsed body's bytes as UTF-8 without a byte order mark, the one form
 * Prism reads as the server's parser does: it answered a BOM in its HTTP
 * library's own error shape, and the stateful mock's service got UTF-16
 * through Prism's proxy as UTF-8. A body in another charset has its
 * Content-Type's charset rewritten with it; one TextDecoder cannot read
 * (UTF-32) goes as it came.
 */
function asUtf8(req: http.IncomingMessage, body: Buffer): Buffer {
  const type = contentType.parse(req.headers["content-type"] ?? "application/json");
  const charset = (type.parameters.charset ?? "utf-8").toLowerCase();
  if (charset === "utf-8" || charset === "utf8") return body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? body.subarray(3) : body;
  // Plain "utf-16" is big-endian when its BOM says so (iconv-lite, which the server's parser uses, reads it so).
  const label = charset === "utf-16" && body[0] === 0xfe && body[1] === 0xff ? "utf-16be" : charset;
  let text: string;
  try {
    text = new TextDecoder(label).decode(body);
  } catch {
    return body;
  }
  req.headers["content-type"] = contentType.format({ type: type.type, parameters: { ...type.parameters, charset: "utf-8" } });
  return Buffer.from(text, "utf8");
}

interface Targets {
  prism: URL;
  service: URL | null;
}

interface JsonParser {
  parse: RequestHandler;
  /** The body each parsed request came with, as bytes (decompressed). */
  bodies: WeakMap<object, Buffer>;
}

// Deeper than any body of the contract, and far less deep than the bodies
// Prism fails on (thousands of levels).
const MAX_DEPTH_FOR_PRISM = 32;

/**
 * Requests Prism fails on, with a 500 or by exiting (it then answers
 * nothing more): HEAD (its proxy fails on it; its mock does not), a URL
 * that is not valid percent-encoding, a Content-Type that does not parse,
 * and a body nested thousands deep (tooDeepForPrism). The server refuses
 * each or answers it without a handler (405, 400, 415), so the service
 * behind Prism answers them exactly as the server does. Prism's issue
 * tracker has no report of these; the front door keeps the mock alive
 * meanwhile. One more does not fail but is taken for another: a path with
 * an empty segment (`/agents//by-id/1`), which Prism's proxy forwards as
 * the path without it, where the server, and Prism's mock, answer 404.
 */
type NotForPrism = "HEAD" | "empty segment" | "malformed URL" | "malformed Content-Type" | "too deep";

function notForPrism(req: http.IncomingMessage): NotForPrism | null {
  if (req.method === "HEAD") return "HEAD";
  const url = req.url ?? "/";
  // The path of an origin-form target (an absolute-form one has `//` after its scheme).
  if (url.startsWith("/") && url.split("?", 1)[0]!.includes("//")) return "empty segment";
  try {
    decodeURIComponent(url);
  } catch {
    return "malformed URL";
  }
  const type = req.headers["content-type"];
  if (type === undefined || parses(type)) return null;
  // Parameters that do not parse (`application/json; charset`), which the
  // server ignores: Prism gets the media type alone.
  const mediaType = type.split(";", 1)[0]!.trim();
  if (!parses(mediaType)) return "malformed Content-Type";
  // The charset is kept, as the server's parser keeps it: a body in
  // another charset must still get the server's answer (415, or 400).
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(type)?.[1];
  const kept = charset ? `${mediaType}; charset=${charset}` : mediaType;
  req.headers["content-type"] = parses(kept) ? kept : mediaType;
  return null;
}

/** Whether a Content-Type parses as Prism parses it (content-type, which throws on what it cannot read). */
function parses(type: string): boolean {
  try {
    contentType.parse(type);
    return true;
  } catch {
    return false;
  }
}

/** The stateless mock's answer to what Prism cannot take, as the server answers it; null: Prism's mock takes it. */
function serverAnswer(what: NotForPrism): HttpProblem | null {
  switch (what) {
    case "HEAD":
    case "empty segment":
      return null;
    case "malformed URL":
      return new HttpProblem(400, "invalid request", [{ location: "path", path: "", message: "is not a valid percent-encoded path" }]);
    case "malformed Content-Type":
      return new HttpProblem(415, "unsupported media type");
    case "too deep":
      return new HttpProblem(400, "invalid request", [{ location: "body", path: "", message: `must not nest deeper than ${MAX_DEPTH_FOR_PRISM} levels` }]);
  }
}

/**
 * A browser's CORS preflight: any origin and any request header allowed,
 * as by Prism, and the contract's methods, as by the server. Every
 * preflight is answered here, so Prism's own CORS options (`--cors`) do
 * not apply to them.
 */
function preflight(req: http.IncomingMessage, res: http.ServerResponse): void {
  const asked = req.headers["access-control-request-headers"];
  res.writeHead(204, {
    ...cors(req),
    "access-control-allow-methods": "GET, POST",
    ...(asked === undefined ? {} : { "access-control-allow-headers": asked }),
    "access-control-max-age": "600",
  });
  res.end();
}

/** Sends what Prism cannot take to the service, or answers it (stateless); false when Prism takes it after all. */
function bypassPrism(what: NotForPrism, req: http.IncomingMessage, res: http.ServerResponse, to: Targets, body?: Buffer): boolean {
  // Without Prefer: a forced answer is Prism's, and these are refused anyway.
  if (to.service !== null) {
    // The service answers no CORS (it is not the browser's origin's server): the front door adds Prism's.
    forward(req, res, to.service, undefined, body, cors(req));
    return true;
  }
  const problem = serverAnswer(what);
  if (problem === null) return false;
  answer(res, problem.status, problem.body(), ownHeaders(req, to));
  req.resume();
  return true;
}

/** Whether a parsed body nests deeper than Prism's validation can take (walked with a stack: no recursion). */
function tooDeepForPrism(body: unknown): boolean {
  const stack: [unknown, number][] = [[body, 0]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [value, depth] = item;
    if (value === null || typeof value !== "object") continue;
    if (depth >= MAX_DEPTH_FOR_PRISM) return true;
    for (const child of Object.values(value)) stack.push([child, depth + 1]);
  }
  return false;
}

function jsonParser(limitBytes: number): JsonParser {
  const bodies = new WeakMap<object, Buffer>();
  const parse = express.json({
    strict: true,
    limit: limitBytes,
    verify: (req, res, body, encoding) => {
      bodies.set(req, body);
      bodyBytesChecked(req, res, body, encoding);
    },
  });
  return { parse, bodies };
}

/**
 * The server's routes take one trailing slash (Express's routing is not
 * strict: `/agents/` is `/agents`); Prism's mock answers 404 to it.
 */
function withoutTrailingSlash(url: string): string {
  const at = url.indexOf("?");
  const path = at < 0 ? url : url.slice(0, at);
  if (path.length < 2 || !path.endsWith("/") || path.endsWith("//")) return url;
  return path.slice(0, -1) + (at < 0 ? "" : url.slice(at));
}

/**
 * The error detail of an example Prism answered with a 204, named where it
 * was asked (prefer.ts): asked of the 204 itself, or of a status whose
 * answer lacks it (Prism then falls back to the 204).
 */
function exampleOfNoContent(forced: Forcing): { location: "header" | "query"; path: string; message: string } {
  const name = forced.example === true || forced.example === undefined ? "" : forced.example;
  const where = askedWhere(forced, "example");
  if (typeof forced.code === "string" && forced.code !== "204") return { ...where, message: noExampleNamed(answerNamed(forced), name) };
  const status = forced.askedIn === "header" ? `code=<status>, example=${name}` : `__code=<status>&__example=${encodeURIComponent(name)}`;
  return { ...where, message: `${noExampleNamed("the answer", name)}: a 204 has no body (name the status of the answer that has it: ${status})` };
}

function violationsOf(reply: http.IncomingMessage): http.OutgoingHttpHeaders {
  return reply.headers["sl-violations"] === undefined ? {} : { "sl-violations": reply.headers["sl-violations"] };
}

function forward(req: http.IncomingMessage, res: http.ServerResponse, target: URL, prefer: string | undefined, body?: Buffer, added: http.OutgoingHttpHeaders = {}): void {
  const headers = { ...req.headers };
  // Met here (100-continue by Node, any other ignored): Prism, a Node server too, would answer 417.
  delete headers.expect;
  delete headers.prefer;
  if (prefer !== undefined) headers.prefer = prefer;
  if (body !== undefined) {
    // Sent on as read: whole, and decompressed if it came compressed.
    delete headers["content-encoding"];
    delete headers["transfer-encoding"];
    headers["content-length"] = String(body.length);
  }
  const path = `${target.pathname.replace(/\/$/, "")}${req.url ?? "/"}`;
  const forced = forcing(prefer, req.url ?? "/");
  const upstream = http.request({ host: target.hostname, port: target.port, method: req.method, path, headers }, (reply) => {
    if (reply.statusCode === 204 && forced !== null && forced.example !== undefined) {
      // Prism ignores an example name when the answer has no body: the
      // client asked for an answer it does not get, so say so, as for a
      // name the answer lacks (contractAnswer).
      reply.resume();
      answer(res, 400, { error: ERROR_IDS[400]!, details: [exampleOfNoContent(forced)] }, { ...cors(req), ...added });
      return;
    }
    const type = reply.headers["content-type"] ?? "";
    if (!type.startsWith("application/problem+json")) {
      // Prism's CORS replaced by the front door's: Prism exposes `*`, which
      // a browser takes literally on a request with credentials (a page read
      // no Retry-After), and varies on nothing though it names the origin.
      res.writeHead(reply.statusCode ?? 502, { ...reply.headers, ...cors(req), ...added });
      reply.pipe(res);
      return;
    }
    const chunks: Buffer[] = [];
    reply.on("data", (chunk: Buffer) => chunks.push(chunk));
    reply.on("end", () => {
      let problem: Problem = {};
      try {
        problem = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Problem;
      } catch {
        // Not even JSON: the status alone decides.
      }
      const { status, body } = contractAnswer(problem, reply.statusCode ?? 500, forced);
      answer(res, status, body, { ...cors(req), ...violationsOf(reply), ...added });
    });
  });
  upstream.on("error", () => {
    if (!res.headersSent) answer(res, 500, { error: ERROR_IDS[500]! }, { ...cors(req), ...requestId(req) });
    else res.destroy();
  });
  res.on("close", () => upstream.destroy());
  if (body === undefined) req.pipe(upstream);
  else upstream.end(body);
}

/**
 * `POST /__mock/reset`: 204 once the state is back as at start; not
 * delayed, not validated by Prism, and no token needed (the stateful mock
 * listens on loopback only). Another method gets the server's 405.
 */
function answerReset(req: http.IncomingMessage, res: http.ServerResponse, to: Targets, reset: () => Promise<void>): void {
  req.resume();
  if (isPreflight(req)) return preflight(req, res);
  if (req.method !== "POST") return answer(res, 405, { error: ERROR_IDS[405]! }, { ...ownHeaders(req, to), allow: "POST" });
  reset().then(
    () => {
      res.writeHead(204, ownHeaders(req, to));
      res.end();
    },
    (err: unknown) => {
      // The service behind logs its own failures; this one is the mock's.
      console.error(`npm run mock: the reset failed: ${describeFailure(err)}`);
      answer(res, 500, { error: ERROR_IDS[500]! }, ownHeaders(req, to));
    },
  );
}

export async function startFrontDoor(options: FrontDoorOptions): Promise<FrontDoor> {
  const to: Targets = { prism: new URL(options.prism), service: options.upstream === null ? null : new URL(options.upstream) };
  const parser = jsonParser(options.bodyLimitBytes);
  const server = http.createServer((req, res) => {
    if ((req.url ?? "/").split("?", 1)[0] === RESET_PATH) return answerReset(req, res, to, options.reset);
    // Not delayed, and cached by the browser (Prism's has no max-age): a
    // delay set for loading states must not be paid twice per request.
    if (isPreflight(req)) {
      preflight(req, res);
      req.resume();
      return;
    }
    const { rest, delayMs } = takeDelay(req.headers.prefer as string | undefined);
    if (delayMs !== null && Number.isNaN(delayMs)) {
      answer(
        res,
        400,
        { error: ERROR_IDS[400]!, details: [{ location: "header", path: "Prefer", message: `delay must be a whole number of milliseconds from 0 to ${MAX_DELAY_MS}` }] },
        ownHeaders(req, to),
      );
      req.resume();
      return;
    }
    // A body not said to be JSON: Prism's mock would take a `+json` type, or answer text with a 400.
    bodyRefusal(req, (refused) => {
      if (refused !== null) {
        answer(res, refused.status, refused.body(), ownHeaders(req, to));
        req.resume();
        return;
      }
      // E.g. HEAD: 405 with Allow, or 404 off the contract's paths.
      const notFor = notForPrism(req);
      if (notFor !== null && bypassPrism(notFor, req, res, to)) return;
      const wait = delayMs ?? options.delayMs;
      if (wait === 0) return parseJsonThenForward(parser, req, res, to, rest);
      // A client that gives up during the delay sends nothing on: its request has no effect.
      const timer = setTimeout(() => parseJsonThenForward(parser, req, res, to, rest), wait);
      res.on("close", () => clearTimeout(timer));
    });
  });
  // As the server: every header line is kept, so a body framed by one after
  // the 2,000th (Node's default count) is not read and ignored.
  server.maxHeadersCount = 0;
  // As the server: an expectation other than 100-continue is ignored, not answered 417.
  server.on("checkExpectation", (req: http.IncomingMessage, res: http.ServerResponse) => server.emit("request", req, res));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${hostPort(options.host, port)}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
