// In front of Prism: what Prism cannot do. It delays answers on demand
// (`--delay`, or `Prefer: delay=<ms>` for one answer; Prism has no latency
// option), so loading states and time-outs can be built; and it gives every
// answer Prism produces itself (problem+json, for a malformed `Prefer` say)
// the contract's `Error` body, so a front end meets one error shape whichever
// layer answered. A JSON body the server would refuse before reading it
// (malformed, or not an object) is refused here as the server refuses it,
// since Prism does otherwise (refusedJsonBody). Everything else passes
// through untouched, streamed.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { ERROR_IDS, type ErrorBody } from "../server/http/errors.js";

export const MAX_DELAY_MS = 10_000;

export interface FrontDoorOptions {
  host: string;
  port: number;
  /** Prism's own address, `http://127.0.0.1:<port>`. */
  prism: string;
  /** The delay of every answer that does not ask for its own. */
  delayMs: number;
}

export interface FrontDoor {
  url: string;
  close(): Promise<void>;
}

/** `Prefer` without its `delay` preference, and that delay: null when absent, NaN when not a valid one. */
export function takeDelay(prefer: string | undefined): { rest: string | undefined; delayMs: number | null } {
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

/** The contract's answer for a problem+json of Prism's own. */
export function contractAnswer(problem: Problem, status: number): { status: number; body: ErrorBody } {
  const message = problem.detail || problem.title || "rejected by the mock";
  // 422: Prism could not read the `Prefer` header (`code=abc`).
  if (status === 422 || (status >= 400 && status < 500 && ERROR_IDS[status] === undefined)) {
    return { status: 400, body: { error: ERROR_IDS[400]!, details: [{ location: "header", path: "Prefer", message }] } };
  }
  if (status === 400) return { status, body: { error: ERROR_IDS[400]!, details: [{ location: "body", path: "", message }] } };
  const known = ERROR_IDS[status];
  return known === undefined ? { status: 500, body: { error: ERROR_IDS[500]! } } : { status, body: { error: known } };
}

const CORS = { "access-control-allow-origin": "*", "access-control-expose-headers": "sl-violations" };

function answer(res: http.ServerResponse, status: number, body: ErrorBody, headers: http.OutgoingHttpHeaders = CORS): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/**
 * A JSON request body the server's body parser refuses (express.json, strict)
 * and Prism does not: Prism answers malformed JSON in its own error shape,
 * and passes `null`, `0` or `false` on as no body at all, which the service
 * behind it would take for a pause without a reason. Null when the body is
 * empty or an object or array, which go on to Prism.
 */
export function refusedJsonBody(text: string): ErrorBody | null {
  if (text.length === 0) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: ERROR_IDS[400]!, details: [{ location: "body", path: "", message: "is not valid JSON" }] };
  }
  if (value !== null && typeof value === "object") return null;
  return { error: ERROR_IDS[400]!, details: [{ location: "body", path: "", message: "must be object" }] };
}

const isJsonRequest = (req: http.IncomingMessage): boolean => /^application\/json\s*(;|$)/i.test(req.headers["content-type"] ?? "");

/** Forwards `req` to Prism once its JSON body, if any, passed refusedJsonBody. */
function check(req: http.IncomingMessage, res: http.ServerResponse, prism: URL, prefer: string | undefined): void {
  if (!isJsonRequest(req)) return forward(req, res, prism, prefer);
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    const refused = refusedJsonBody(body.toString("utf8"));
    if (refused !== null) answer(res, 400, refused);
    else forward(req, res, prism, prefer, body);
  });
}

function forward(req: http.IncomingMessage, res: http.ServerResponse, prism: URL, prefer: string | undefined, body?: Buffer): void {
  const headers = { ...req.headers };
  delete headers.prefer;
  if (prefer !== undefined) headers.prefer = prefer;
  const upstream = http.request({ host: prism.hostname, port: prism.port, method: req.method, path: req.url, headers }, (reply) => {
    const type = reply.headers["content-type"] ?? "";
    if (!type.startsWith("application/problem+json")) {
      res.writeHead(reply.statusCode ?? 502, reply.rawHeaders);
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
      const { status, body } = contractAnswer(problem, reply.statusCode ?? 500);
      const kept = Object.fromEntries(Object.entries(reply.headers).filter(([name]) => name.startsWith("access-control-") || name === "sl-violations"));
      answer(res, status, body, kept);
    });
  });
  upstream.on("error", () => {
    if (!res.headersSent) answer(res, 500, { error: ERROR_IDS[500]! });
    else res.destroy();
  });
  res.on("close", () => upstream.destroy());
  if (body === undefined) req.pipe(upstream);
  else upstream.end(body);
}

export async function startFrontDoor(options: FrontDoorOptions): Promise<FrontDoor> {
  const prism = new URL(options.prism);
  const server = http.createServer((req, res) => {
    const { rest, delayMs } = takeDelay(req.headers.prefer as string | undefined);
    if (delayMs !== null && Number.isNaN(delayMs)) {
      answer(res, 400, {
        error: ERROR_IDS[400]!,
        details: [{ location: "header", path: "Prefer", message: `delay must be a whole number of milliseconds from 0 to ${MAX_DELAY_MS}` }],
      });
      req.resume();
      return;
    }
    const wait = delayMs ?? options.delayMs;
    if (wait === 0) return check(req, res, prism, rest);
    // A client that gives up during the delay sends nothing on: its request has no effect.
    const timer = setTimeout(() => check(req, res, prism, rest), wait);
    res.on("close", () => clearTimeout(timer));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
