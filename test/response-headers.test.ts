// The headers every API answer carries (server/http/response-headers.ts),
// through a real server: successes, every kind of refusal (the token check,
// the contract, the rate limit, the body parser, Node's own HTTP parser),
// CORS preflights; and the challenge on a 401.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import path from "node:path";
import { API_HEADERS, HSTS } from "../server/http/response-headers.js";
import { SUITE_AGENTS } from "./helpers/agents.js";
import type { Answer } from "./helpers/https.js";
import { header, RawHttpsClient } from "./helpers/raw-https.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

const AGENT = SUITE_AGENTS.pausable;
const AWAY = SUITE_AGENTS.away;
const EXPECTED = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
};
const STRICT_TRANSPORT = { "strict-transport-security": "max-age=31536000" };

/** The headers of every answer; HSTS only where the server presents the deployment's certificate (AGENTD_TLS_CERT). */
function expectApiHeaders(answer: Pick<Answer, "headers" | "status">, what: string, hsts = false): void {
  for (const [name, value] of Object.entries(EXPECTED)) expect(answer.headers[name], `${what} (${answer.status}): ${name}`).toBe(value);
  expect(answer.headers["strict-transport-security"], `${what} (${answer.status}): strict-transport-security`).toBe(hsts ? STRICT_TRANSPORT["strict-transport-security"] : undefined);
}

/**
 * Sends the request's bytes as they are (test/helpers/raw-https.ts, on a
 * connection of its own, closed after the answer): the status and the
 * headers this test checks.
 */
async function rawAnswer(server: TestServer, request: string): Promise<Pick<Answer, "headers" | "status">> {
  const { hostname, port } = new URL(server.url);
  const client = new RawHttpsClient(hostname, Number(port), server.ca);
  try {
    const answer = await client.send({ bytes: Buffer.from(request, "latin1"), head: false, once: true });
    return { status: answer.status, headers: Object.fromEntries([...Object.keys(EXPECTED), ...Object.keys(STRICT_TRANSPORT)].map((name) => [name, header(answer, name)])) };
  } finally {
    client.close();
  }
}

describe("headers on every API answer", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(
      { AGENTD_BODY_LIMIT: "1kb", AGENTD_CORS_ORIGINS: "https://app.example.com" },
      [AGENT, AWAY],
    );
  });
  afterAll(async () => {
    await server?.close();
  });

  it("the module's set is the one this test expects", () => {
    expect(Object.fromEntries(Object.entries(API_HEADERS).map(([k, v]) => [k.toLowerCase(), v]))).toEqual(EXPECTED);
    expect(Object.fromEntries(Object.entries(HSTS).map(([k, v]) => [k.toLowerCase(), v]))).toEqual(STRICT_TRANSPORT);
  });

  it("on answers and refusals of every layer", async () => {
    const read = await server.call("GET", `/agents/by-number/${AGENT.number}`);
    expect(read.status).toBe(200);
    expectApiHeaders(read, "a read");

    const answers: [string, Answer, number][] = [
      ["a pause", await server.call("POST", `/agents/by-number/${AGENT.number}/pause`, { body: {} }), 204],
      ["a conflict", await server.call("POST", `/agents/by-number/${AWAY.number}/pause`, { body: {} }), 409],
      ["no such agent", await server.call("GET", "/agents/by-number/999999"), 404],
      ["a bad path value", await server.call("GET", "/agents/by-id/x"), 400],
      ["a wrong method", await server.call("DELETE", `/agents/by-number/${AGENT.number}`), 405],
      ["outside the base path", await server.call("GET", "/../nowhere"), 404],
      ["a body too large", await server.call("POST", `/agents/by-number/${AGENT.number}/unpause`, { rawBody: `{"x":"${"y".repeat(2000)}"}`, headers: { "content-type": "application/json" } }), 413],
      ["a body that is not JSON", await server.call("POST", `/agents/by-number/${AGENT.number}/unpause`, { rawBody: "x", headers: { "content-type": "text/plain" } }), 415],
      ["a made-up token", await server.call("GET", "/agents", { token: "made-up-token" }), 401],
      ["no token", await server.call("GET", "/agents", { token: null }), 401],
    ];
    for (const [what, answer, status] of answers) {
      expect(answer.status, what).toBe(status);
      expectApiHeaders(answer, what);
    }
    const preflight = await server.call("OPTIONS", "/agents", {
      token: null,
      headers: { origin: "https://app.example.com", "access-control-request-method": "GET", "access-control-request-headers": "x-auth-token" },
    });
    expect(preflight.status).toBe(204);
    expectApiHeaders(preflight, "a CORS preflight");
  });

  it("on a 429", async () => {
    const limitedServer = await startTestServer({ AGENTD_RATE_LIMIT: "1", AGENTD_RATE_BURST: "1" }, [AGENT]);
    try {
      let limited = await limitedServer.call("GET", "/agents");
      for (let i = 0; i < 10 && limited.status !== 429; i++) limited = await limitedServer.call("GET", "/agents");
      expect(limited.status).toBe(429);
      expectApiHeaders(limited, "a rate limit");
    } finally {
      await limitedServer.close();
    }
  });

  it("a 401 carries the challenge naming the token's header; no other answer does", async () => {
    for (const token of ["made-up-token-2", null]) {
      const answer = await server.call("GET", `/agents/by-number/${AGENT.number}`, { token });
      expect(answer.status).toBe(401);
      expect(answer.headers["www-authenticate"]).toBe('X-Auth-Token realm="agentd"');
    }
    expect((await server.call("GET", `/agents/by-number/${AGENT.number}`)).headers["www-authenticate"]).toBeUndefined();
  });

  it("on what Node's own parser refuses before Express sees it", async () => {
    const broken = await rawAnswer(server, "GET /1.0/agents HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n");
    expect(broken.status).toBe(400);
    expectApiHeaders(broken, "a malformed request");
    const huge = await rawAnswer(server, `GET /1.0/agents HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`);
    expect(huge.status).toBe(431);
    expectApiHeaders(huge, "oversized headers");
  });

  // The generated certificate is for development on localhost: HSTS from it
  // would pin every port of localhost to HTTPS in a browser that trusted it.
  it("Strict-Transport-Security only with the deployment's certificate (AGENTD_TLS_CERT), on every layer's answers", async () => {
    const dir = path.dirname(server.running.certPath);
    const deployed = await startTestServer({ AGENTD_TLS_CERT: server.running.certPath, AGENTD_TLS_KEY: path.join(dir, "key.pem") }, [AGENT]);
    try {
      expectApiHeaders(await deployed.call("GET", `/agents/by-number/${AGENT.number}`), "a read", true);
      expectApiHeaders(await deployed.call("GET", "/agents", { token: null }), "no token", true);
      expectApiHeaders(await rawAnswer(deployed, "GET /1.0/agents HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n"), "a malformed request", true);
    } finally {
      await deployed.close();
    }
  });
});
