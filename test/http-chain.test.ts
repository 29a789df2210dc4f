// The HTTP chain in process, without a database: createApp over stores that
// fail on purpose, served over real HTTPS on an ephemeral port, and the
// chain's own pieces (the pre-validation middleware, the error mapping) on
// their own. Milliseconds each; the over-HTTPS suites with a real database
// (server-api, contract-suite, fuzz) still prove the whole server.
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import net, { type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import tls from "node:tls";
import express from "express";
import { pino, type Logger } from "pino";
import { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { TokenVerifier } from "../server/auth/verifier.js";
import { BASE_PATH } from "../server/contract.js";
import { DatabaseUnavailableError } from "../server/db/sql.js";
import { createApp } from "../server/http/app.js";
import { HttpProblem, errorHandler, toProblem } from "../server/http/errors.js";
import { requestLogger } from "../server/http/logging.js";
import { requestHygiene } from "../server/http/request-hygiene.js";
import type { AgentStore } from "../server/store/agent-store.js";
import { loadOrCreateCertificate, tlsServerOptions } from "../server/tls/certificate.js";
import { callHttps, type Answer } from "./helpers/https.js";

const SECRET = "postgres://agentd:hunter2@db.internal/agentd";

/** A store whose every call rejects with `error`: what a broken database or a bug looks like to the chain. */
function failingStore(error: () => unknown): AgentStore {
  // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- values that are not Errors are part of what is tested
  const fail = () => Promise.reject(error());
  return { originUuid: "6f1c3c6e-2b7a-4f5e-9a0d-3c2b1a0f9e8d", list: fail, getById: fail, getByNumber: fail, pause: fail, unpause: fail, upsert: fail };
}

const allowAll: TokenVerifier = { verify: () => Promise.resolve({ ok: true }) };

/** A pino logger whose lines are kept, parsed, for the test to read. */
function capturedLogger() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n")) if (line !== "") lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: "info" }, sink), lines };
}

async function listen(server: http.Server | https.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

/** createApp over `store` and `verifier`, served over HTTPS on an ephemeral port, as the server serves it. */
async function serveChain(store: AgentStore, verifier: TokenVerifier, logger: Logger): Promise<{ base: string; dispatcher: Agent; close(): Promise<void> }> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "agentd-chain-"));
  const certificate = await loadOrCreateCertificate({ dataDir });
  const app = createApp({
    config: { validateResponses: true, bodyLimitBytes: 16 * 1024, rateLimit: null, corsOrigins: [], tlsCert: null },
    store,
    verifier,
    logger,
  });
  const server = https.createServer(tlsServerOptions(certificate), app);
  const base = `https://127.0.0.1:${await listen(server)}${BASE_PATH}`;
  const dispatcher = new Agent({ connect: { ca: certificate.cert } });
  return {
    base,
    dispatcher,
    async close() {
      await dispatcher.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

describe("createApp over a failing token check, served over HTTPS", () => {
  let chain: Awaited<ReturnType<typeof serveChain>>;
  let thrown: () => unknown;
  const { logger, lines } = capturedLogger();

  beforeAll(async () => {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- what the verifier throws is what is tested
    chain = await serveChain(failingStore(() => new Error("the store is never reached")), { verify: () => Promise.reject(thrown()) }, logger);
  });
  afterAll(async () => {
    await chain?.close();
  });

  // Besides the access log's own line for the request ("request failed").
  const failureLines = () => lines.filter((line) => (line.level as number) >= 40 && line.msg !== "request failed");

  // One line per failure, where its cause is known, not a second one quoting
  // the validator's own 401 with its stack.
  it.each([
    ["a database outage during the check answers 503 and logs one warning", () => new DatabaseUnavailableError("connect ECONNREFUSED 127.0.0.1:5432"), 503, "database unavailable", 40, "ECONNREFUSED"],
    ["a bug in the check answers 500 and logs one error", () => new Error("verifier bug"), 500, "server error", 50, "verifier bug"],
  ] as const)("%s, with the cause", async (_what, error, status, id, level, cause) => {
    thrown = error;
    lines.length = 0;
    const answer = await callHttps(chain.dispatcher, "GET", `${chain.base}/agents`, { token: "any" });
    expect(answer.status).toBe(status);
    expect(answer.json).toEqual({ error: id });
    const logged = failureLines();
    expect(logged, JSON.stringify(lines)).toEqual([expect.objectContaining({ level, msg: "token check failed", reqId: answer.headers["x-request-id"] })]);
    expect(JSON.stringify(logged[0])).toContain(cause);
    // An outage lasts and logs once per request: its cause, without a stack; a bug keeps its stack.
    expect("err" in logged[0]!).toBe(status === 500);
  });
});

describe("createApp over a failing store, served over HTTPS", () => {
  let chain: Awaited<ReturnType<typeof serveChain>>;
  let thrown: () => unknown;
  const { logger, lines } = capturedLogger();

  beforeAll(async () => {
    chain = await serveChain(failingStore(() => thrown()), allowAll, logger);
  });
  afterAll(async () => {
    await chain?.close();
  });

  const call = (method: string, route: string, body?: unknown): Promise<Answer> =>
    callHttps(chain.dispatcher, method, chain.base + route, { token: "any", ...(body === undefined ? {} : { body }) });

  it.each([
    ["GET", "/agents", undefined],
    ["GET", "/agents/by-id/1", undefined],
    ["GET", "/agents/by-number/1001", undefined],
    ["POST", "/agents/by-number/1001/pause", { reason: "lunch" }],
    ["POST", "/agents/by-number/1001/unpause", undefined],
  ] as const)("%s %s: a bug answers 500 server error, logged with the request id, nothing leaked", async (method, route, body) => {
    thrown = () => new Error(`connection to ${SECRET} lost`);
    lines.length = 0;
    const answer = await call(method, route, body);
    expect(answer.status).toBe(500);
    expect(answer.json).toEqual({ error: "server error" });
    expect(answer.text).not.toContain("hunter2");
    const requestId = answer.headers["x-request-id"];
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    const logged = lines.find((line) => line.msg === "server error");
    expect(logged, JSON.stringify(lines)).toMatchObject({ reqId: requestId, level: 50 });
    expect(JSON.stringify(logged)).toContain("hunter2"); // the operator sees the cause; the client does not
  });

  it("a database outage answers 503 database unavailable, logged as one warning with its cause and no stack", async () => {
    thrown = () => new DatabaseUnavailableError("connect ECONNREFUSED 127.0.0.1:5432");
    lines.length = 0;
    const answer = await call("GET", "/agents");
    expect(answer.status).toBe(503);
    expect(answer.json).toEqual({ error: "database unavailable" });
    const logged = lines.filter((line) => (line.level as number) >= 40 && line.msg !== "request failed");
    expect(logged, JSON.stringify(lines)).toEqual([
      { ...logged[0], level: 40, msg: "database unavailable", reqId: answer.headers["x-request-id"], cause: "connect ECONNREFUSED 127.0.0.1:5432" },
    ]);
    expect(logged[0]).not.toHaveProperty("err");
  });

  it("whatever is thrown, even a value that is not an Error, is a 500 with the contract's body", async () => {
    for (const value of ["a string", null, undefined, 42, { status: 999 }]) {
      thrown = () => value;
      const answer = await call("GET", "/agents");
      expect(answer.status, JSON.stringify(value)).toBe(500);
      expect(answer.json).toEqual({ error: "server error" });
      // A 500 is an API answer like any other (test/response-headers.test.ts has the rest).
      expect(answer.headers["cache-control"]).toBe("no-store");
      expect(answer.headers["x-content-type-options"]).toBe("nosniff");
    }
  });

  it("a database that cannot be reached is a 503 database unavailable", async () => {
    thrown = () => new DatabaseUnavailableError(`timeout talking to ${SECRET}`);
    const answer = await call("GET", "/agents/by-number/1001");
    expect(answer.status).toBe(503);
    expect(answer.json).toEqual({ error: "database unavailable" });
    expect(answer.headers["cache-control"]).toBe("no-store");
  });

  it("a request the contract refuses never reaches the store", async () => {
    thrown = () => new Error("the store was called");
    const answer = await call("GET", "/agents/by-id/abc");
    expect(answer.status).toBe(400);
    expect(answer.json.error).toBe("invalid request");
  });

  it("logs a request's path but never its query string, where a client may have put a token", async () => {
    lines.length = 0;
    const answer = await call("GET", "/agents?token=LEAKME123");
    expect(answer.status).toBe(400);
    const logged = lines.find((line) => line.msg === "request completed" && line.reqId === answer.headers["x-request-id"]);
    expect(logged, JSON.stringify(lines)).toMatchObject({ url: "/1.0/agents?…", statusCode: 400 });
    expect(JSON.stringify(lines)).not.toContain("LEAKME123");
  });

  // Found by review: read at the end, the address of a destroyed socket is gone.
  it("names the client on the line of a request whose client went away mid-body", async () => {
    lines.length = 0;
    const url = new URL(chain.base);
    const socket = tls.connect({ host: url.hostname, port: Number(url.port), rejectUnauthorized: false });
    await new Promise((resolve) => socket.once("secureConnect", resolve));
    socket.write(`POST ${url.pathname}/agents/by-number/1001/pause HTTP/1.1\r\nHost: x\r\nX-Auth-Token: any\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"re`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket.destroy();
    await vi.waitFor(
      () => expect(lines.find((line) => line.url === `${url.pathname}/agents/by-number/1001/pause`)).toMatchObject({ client: expect.stringMatching(/127\.0\.0\.1$/) }),
      { timeout: 5_000 },
    );
  });

  // Express and the validator match without regard to case by default; the contract's paths (and upstream) do not.
  it("a path in another case than the contract's is not an operation: 404, never the store", async () => {
    thrown = () => new Error("the store was called");
    for (const [method, route] of [["GET", "/AGENTS"], ["GET", "/agents/By-Id/1"], ["GET", "/Agents/by-number/1001"], ["POST", "/agents/by-number/1001/PAUSE"]] as const) {
      const answer = await call(method, route);
      expect(answer.status, `${method} ${route}`).toBe(404);
      expect(answer.json).toEqual({ error: "not found" });
    }
  });

  it("an agent_id that overflows to Infinity is a 400, not a lookup (patches/ajv+8.20.0.patch)", async () => {
    thrown = () => new Error("the store was called");
    for (const id of ["9".repeat(309), `1${"0".repeat(400)}`]) {
      const answer = await call("GET", `/agents/by-id/${id}`);
      expect(answer.status).toBe(400);
      expect(answer.json).toMatchObject({ error: "invalid request", details: [{ location: "path", path: "agent_id" }] });
    }
  });

  it("a 405 names the allowed methods in Allow", async () => {
    const answer = await call("DELETE", "/agents/by-number/1001/pause");
    expect(answer.status).toBe(405);
    expect(answer.json).toEqual({ error: "method not allowed" });
    expect(answer.headers.allow).toBe("POST");
  });
});

describe("requestHygiene on its own", () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    const app = express();
    app.use(requestHygiene(16 * 1024));
    app.use((req, res) => {
      res.json({ conditional: Object.keys(req.headers).filter((name) => name.startsWith("if-")) });
    });
    app.use(errorHandler(pino({ level: "silent" })));
    server = http.createServer({ requireHostHeader: false }, app);
    port = await listen(server);
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  /** One raw HTTP/1.1 exchange, so headers Node's client would add (Host) can be left out. */
  function raw(request: string): Promise<{ status: number; body: unknown }> {
    return new Promise((resolve, reject) => {
      const socket = new net.Socket();
      let text = "";
      socket.on("data", (chunk: Buffer) => (text += chunk.toString()));
      socket.on("error", reject);
      socket.on("close", () => {
        const [head = "", body = ""] = text.split("\r\n\r\n");
        resolve({ status: Number(head.split(" ")[1]), body: body === "" ? undefined : JSON.parse(body) });
      });
      socket.connect(port, "127.0.0.1", () => socket.end(request));
    });
  }

  it("refuses an HTTP/1.1 request without Host with the contract's 400", async () => {
    const answer = await raw("GET /x HTTP/1.1\r\nConnection: close\r\n\r\n");
    expect(answer).toEqual({
      status: 400,
      body: { error: "invalid request", details: [{ location: "header", path: "Host", message: "is required" }] },
    });
  });

  it("refuses a Host or Content-Type sent twice, and a Host that is not a host and port, with the contract's 400", async () => {
    const invalid = (path: string, message: string) => ({ status: 400, body: { error: "invalid request", details: [{ location: "header", path, message }] } });
    expect(await raw("GET /x HTTP/1.1\r\nHost: a\r\nhost: b\r\nConnection: close\r\n\r\n")).toEqual(invalid("Host", "must be sent once"));
    const twoTypes = "POST /x HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}";
    expect(await raw(twoTypes)).toEqual(invalid("Content-Type", "must be sent once"));
    for (const host of ["a b", "a:port", "a:1:2", "user@a", "a/b", "a?b", "a#b", "a\\b", "[::1", "a%zz"]) {
      expect(await raw(`GET /x HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`), host).toEqual(invalid("Host", "must be a host name or address, with an optional port"));
    }
    for (const host of ["a", "a:8443", "127.0.0.1:1", "[::1]:8443", "[fe80::1%25eth0]:8443", "agentd.example.com.", "a:", "node.10", "a_b"]) {
      expect((await raw(`GET /x HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`)).status, host).toBe(200);
    }
    // HTTP/1.0 needs no Host at all.
    expect((await raw("GET /x HTTP/1.0\r\n\r\n")).status).toBe(200);
  });

  it("drops conditional headers, so no 304 can arise", async () => {
    const answer = await raw("GET /x HTTP/1.1\r\nHost: a\r\nIf-None-Match: *\r\nIf-Modified-Since: Sat, 01 Jan 2000 00:00:00 GMT\r\nConnection: close\r\n\r\n");
    expect(answer).toEqual({ status: 200, body: { conditional: [] } });
  });

  it("refuses a body that does not say it is JSON with 415, and accepts one that does", async () => {
    const text = await raw("POST /x HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi");
    expect(text).toEqual({ status: 415, body: { error: "unsupported media type" } });
    const none = await raw("POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi");
    expect(none.status).toBe(415);
    const json = await raw("POST /x HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
    expect(json.status).toBe(200);
  });
});

// Found by a hostile-client review: a request whose client left before any
// answer was logged with Node's default status, 200.
describe("requestLogger on its own", () => {
  it("logs a request that ended before its answer began as aborted, with no status", async () => {
    const { logger, lines } = capturedLogger();
    let arrived!: () => void;
    const handling = new Promise<void>((resolve) => (arrived = resolve));
    const app = express();
    app.use(requestLogger(logger));
    app.use(() => arrived());
    const server = http.createServer(app);
    const port = await listen(server);
    try {
      const socket = net.connect(port, "127.0.0.1", () => socket.write("GET /never HTTP/1.1\r\nHost: a\r\n\r\n"));
      await handling;
      socket.destroy();
      await vi.waitFor(() => expect(lines.find((line) => line.url === "/never")).toMatchObject({ msg: "request aborted", method: "GET" }), { timeout: 5_000 });
      expect(lines.find((line) => line.url === "/never")).not.toHaveProperty("statusCode");
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  // Found by an observability walk: the body parser answers a body cut short
  // with a 400, written over TLS after the client left, which read as answered.
  it("logs a request whose client left mid-body as aborted, though an answer was written after it left", async () => {
    const { logger, lines } = capturedLogger();
    const never = () => new Error("never reached: the body comes first");
    const chain = await serveChain(failingStore(never), { verify: () => Promise.reject(never()) }, logger);
    try {
      const url = new URL(chain.base);
      const socket = tls.connect({ host: url.hostname, port: Number(url.port), rejectUnauthorized: false });
      await once(socket, "secureConnect");
      socket.write(`POST ${url.pathname}/agents/by-number/1001/pause HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{"rea`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      socket.destroy();
      const line = () => lines.find((entry) => String(entry.url).endsWith("/pause"));
      await vi.waitFor(() => expect(line()).toBeDefined(), { timeout: 5_000 });
      expect(line()).toMatchObject({ msg: "request aborted", method: "POST" });
    } finally {
      await chain.close();
    }
  });
});

describe("the error mapping (toProblem) on its own", () => {
  const mapped = (err: unknown) => {
    const p = toProblem(err);
    return { status: p.status, error: p.error, details: p.details, headers: p.headers };
  };

  it("keeps an HttpProblem as it is", () => {
    const problem = new HttpProblem(409, "not logged in");
    expect(toProblem(problem)).toBe(problem);
  });

  it("maps body-parser's errors to 413, 400 and 415", () => {
    expect(mapped({ type: "entity.too.large", status: 413 })).toMatchObject({ status: 413, error: "payload too large" });
    expect(mapped({ type: "entity.parse.failed", status: 400, body: '{"reason": "lunch' })).toMatchObject({
      status: 400,
      details: [{ location: "body", path: "", message: "is not valid JSON" }],
    });
    // body-parser's strict mode refuses JSON that is not an object or an array.
    expect(mapped({ type: "entity.parse.failed", status: 400, body: "null" })).toMatchObject({
      status: 400,
      details: [{ location: "body", path: "", message: "must be object" }],
    });
    expect(mapped({ type: "charset.unsupported", status: 415 })).toMatchObject({ status: 415, error: "unsupported media type" });
    expect(mapped({ type: "request.aborted", status: 400 })).toMatchObject({ status: 400, error: "invalid request" });
  });

  it("turns the validator's errors into details with the contract's locations", () => {
    const err = {
      status: 400,
      errors: [
        { path: "/params/agent_id", message: "must be integer" },
        { path: "/body/reason", message: "must NOT have fewer than 1 characters" },
        { path: ".query.limit", message: "Unknown query parameter 'limit'" },
        { path: "/headers/x-auth-token", message: "is required" },
      ],
    };
    expect(mapped(err).details).toEqual([
      { location: "path", path: "agent_id", message: "must be integer" },
      { location: "body", path: "/reason", message: "must NOT have fewer than 1 characters" },
      { location: "query", path: "limit", message: "Unknown query parameter 'limit'" },
      { location: "header", path: "x-auth-token", message: "is required" },
    ]);
  });

  it("keeps the validator's string headers (Allow on a 405) and nothing else", () => {
    expect(mapped({ status: 405, headers: { Allow: "GET, POST", weird: 3 } })).toMatchObject({
      status: 405,
      error: "method not allowed",
      headers: { Allow: "GET, POST" },
    });
  });

  it("answers an unknown 4xx as 400, and anything else as a 500 server error without details", () => {
    expect(mapped({ status: 418 })).toMatchObject({ status: 400, error: "invalid request" });
    for (const err of [new Error("boom"), "text", null, undefined, { status: 502 }]) {
      expect(mapped(err), JSON.stringify(err) ?? "undefined").toEqual({ status: 500, error: "server error", details: undefined, headers: undefined });
    }
  });
});
