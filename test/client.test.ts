// The typed client (client/index.ts). Its behaviour against real processes
// runs twice, through the shared targets (test/helpers/targets.ts): against
// the Prism mock of openapi.yaml (or any running server when
// AGENTD_CLIENT_TEST_URL + AGENTD_CLIENT_TEST_TOKEN, optional
// AGENTD_CLIENT_TEST_CA, are set), and against the real server started here
// (HTTPS with its self-signed certificate, fresh PGlite, the suite's own
// agents). What needs no server (the token middleware, how answers map to
// results, option checks) runs on an observed client. The TLS tests use
// their own HTTPS server with a certificate generated here.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer as createHttpServer } from "node:http";
import { createServer as createHttpsServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { readFileSync } from "node:fs";
import { generate } from "selfsigned";
import ts from "typescript";
import { BASE_PATH } from "../server/contract.js";
import { escapeRegExp } from "../server/escape-regexp.js";
import { baseUrlProblem } from "../client/checks.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AgentdConfigError,
  AgentdNetworkError,
  createAgentdClient,
  type AgentdResult,
  type AgentStatus,
} from "../client/index.js";
import { loggedOut, SUITE_AGENTS, suiteAgents } from "./helpers/agents.js";
import { repoRoot } from "../devkit/root.js";
import { expectValid, loadContract } from "./helpers/contract.js";
import { createObservedClient, OBSERVED_BASE_URL } from "./helpers/observed-client.js";
import { freePort } from "../devkit/ports.js";
import { startMockOrExternalTarget, startServerTarget, type Target } from "./helpers/targets.js";

const contract = loadContract();
const { pausable, away, bystander } = SUITE_AGENTS;

const TARGETS: { kind: "first" | "server"; label: string; start: () => Promise<Target> }[] = [
  { kind: "first", label: process.env.AGENTD_CLIENT_TEST_URL ? "server at AGENTD_CLIENT_TEST_URL" : "Prism mock", start: startMockOrExternalTarget },
  { kind: "server", label: "real server", start: () => startServerTarget({}, { agents: suiteAgents() }) },
];

/** Narrows a result to success, failing with the error body otherwise. */
function expectOk<T>(result: AgentdResult<T>): T {
  if (!result.ok) throw new Error(`expected success, got ${result.status} ${JSON.stringify(result.error)}`);
  return result.data;
}

describe.each(TARGETS)("against the $label", ({ kind, start }) => {
  let target: Target;
  // Prism answers with the contract's examples whatever the path, and accepts any token.
  const isMock = (): boolean => !target.stateful;
  // Known before the target starts, for tests that differ between the two.
  const statelessMock = kind === "first" && !process.env.AGENTD_CLIENT_TEST_URL;

  beforeAll(async () => {
    target = await start();
  });

  afterAll(async () => {
    await target?.close();
  });

  describe("typed methods", () => {
    it("listAgents returns the contract's agent list", async () => {
      const result = await target.client().listAgents();
      expect(result.ok).toBe(true);
      expect(result.status).toBe(200);
      const list: AgentStatus[] = expectOk(result);
      expectValid(contract.responseValidator("listAgents", 200), list);
      if (isMock()) expect(list.map((a) => a.number)).toEqual(["1001", "1002", "1003"]);
    });

    it("getAgentById and getAgentByNumber return one typed agent", async () => {
      const client = target.client();
      const [first] = expectOk(await client.listAgents());
      expect(first).toBeDefined();

      const byId = expectOk(await client.getAgentById(first!.id));
      expectValid(contract.responseValidator("getAgentById", 200), byId);
      const byNumber = expectOk(await client.getAgentByNumber(first!.number));
      expectValid(contract.responseValidator("getAgentByNumber", 200), byNumber);
      if (!isMock()) {
        // Prism returns its first example whatever the path; only a server knows the agent.
        expect(byId).toEqual(first);
        expect(byNumber).toEqual(first);
      }
    });

    it("pauseAgentByNumber resolves to ok with no data, with and without a reason", async () => {
      const client = target.client();
      const logged = expectOk(await client.listAgents()).find((a) => a.logged);
      expect(logged, "the target has a logged-in agent").toBeDefined();

      const withReason = await client.pauseAgentByNumber(logged!.number, "lunch break");
      expect(withReason).toEqual({ ok: true, status: 204, data: undefined });
      if (!isMock()) {
        const after = expectOk(await client.getAgentByNumber(logged!.number));
        expect(after).toMatchObject({ paused: true, paused_reason: "lunch break" });
      }
      const withoutReason = await client.pauseAgentByNumber(logged!.number);
      expect(withoutReason).toEqual({ ok: true, status: 204, data: undefined });
      if (!isMock()) {
        const after = expectOk(await client.getAgentByNumber(logged!.number));
        expect(after).toMatchObject({ paused: true, paused_reason: null });
      }
    });

    it("unpauseAgentByNumber resolves to ok with no data, on a paused agent and on one that is not", async () => {
      const client = target.client();
      const logged = expectOk(await client.listAgents()).find((a) => a.logged);
      expect(logged, "the target has a logged-in agent").toBeDefined();

      expect(await client.pauseAgentByNumber(logged!.number, "lunch break")).toEqual({ ok: true, status: 204, data: undefined });
      expect(await client.unpauseAgentByNumber(logged!.number)).toEqual({ ok: true, status: 204, data: undefined });
      if (!isMock()) {
        const after = expectOk(await client.getAgentByNumber(logged!.number));
        expect(after).toMatchObject({ paused: false, paused_reason: null });
      }
      expect(await client.unpauseAgentByNumber(logged!.number)).toEqual({ ok: true, status: 204, data: undefined });
    });

    it("an invalid path parameter comes back as a typed 400 with details", async () => {
      const result = await target.client().getAgentByNumber("not-digits");
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.status).toBe(400);
      expectValid(contract.schemaValidator("Error"), result.error);
      expect(result.error.error).toBe("invalid request");
      expect(result.error.details?.some((d) => d.location === "path" && d.path === "agent_number")).toBe(true);
    });

    it("an unknown agent comes back as a typed 404 no such agent", async () => {
      // Prism cannot know which agents exist; ask it for the 404 response.
      const client = target.client(isMock() ? { prefer: "code=404" } : {});
      const result = await client.getAgentById(2147483647);
      expect(result).toEqual({ ok: false, status: 404, error: { error: "no such agent" } });
    });

    it("the raw typed client shares the token middleware", async () => {
      const { raw } = target.client();
      const listed = await raw.GET("/agents");
      const id = listed.data?.[0]?.id;
      expect(id, `the target lists an agent (${listed.response.status})`).toBeTypeOf("number");
      const { data, response } = await raw.GET("/agents/by-id/{agent_id}", { params: { path: { agent_id: id! } } });
      expect(response.status).toBe(200);
      expectValid(contract.responseValidator("getAgentById", 200), data);
    });
  });

  describe("token", () => {
    it("a request without the token is a typed 401 (the target refuses it)", async () => {
      const client = target.client({ noToken: true });
      for (const result of [await client.listAgents(), await client.pauseAgentByNumber(pausable.number), await client.unpauseAgentByNumber(pausable.number)]) {
        expect(result).toEqual({ ok: false, status: 401, error: { error: "invalid token or unauthorized" } });
      }
    });

    if (statelessMock) {
      it("the mock accepts any token that is present (Prism checks only that there is one)", async () => {
        expect((await target.client({ token: "no-such-token" }).listAgents()).ok).toBe(true);
      });
    } else {
      it("an unknown token is a typed 401", async () => {
        const result = await target.client({ token: "no-such-token" }).listAgents();
        expect(result).toEqual({ ok: false, status: 401, error: { error: "invalid token or unauthorized" } });
      });
    }
  });

  // What only a server with real data, tokens and a certificate can show.
  if (kind === "server") {
    describe("state, ACLs and the server's certificate", () => {
      it("lists the agents the suite loaded, and a pause is visible in the list and by id", async () => {
        const client = target.client();
        const before = expectOk(await client.listAgents());
        expect(before.map((a) => a.number)).toEqual(suiteAgents().map((a) => a.number));
        expect(before.find((a) => a.number === bystander.number)).toMatchObject({ logged: true, paused: false });
        expect(await client.pauseAgentByNumber(bystander.number, "client test")).toEqual({ ok: true, status: 204, data: undefined });
        const after = expectOk(await client.listAgents()).find((a) => a.number === bystander.number);
        expect(after).toMatchObject({ paused: true, paused_reason: "client test" });
        expect(expectOk(await client.getAgentById(after!.id))).toEqual(after);
      });

      it("a logged-out agent is a typed 409, and a token without the ACL a typed 403", async () => {
        const client = target.client();
        expect(await client.pauseAgentByNumber(away.number)).toEqual({ ok: false, status: 409, error: { error: "not logged in" } });
        const reader = target.client({ token: await target.createToken(["agentd.agents.read"]) });
        expectOk(await reader.listAgents());
        expect(await reader.pauseAgentByNumber(pausable.number)).toEqual({ ok: false, status: 403, error: { error: "insufficient permissions" } });
        expect(await client.unpauseAgentByNumber(away.number)).toEqual({ ok: false, status: 409, error: { error: "not logged in" } });
        expect(await client.unpauseAgentByNumber("999999")).toEqual({ ok: false, status: 404, error: { error: "no such agent" } });
        expect(await reader.unpauseAgentByNumber(pausable.number)).toEqual({ ok: false, status: 403, error: { error: "insufficient permissions" } });
      });

      it("trusts the server's certificate given as the PEM file the server wrote", async () => {
        expect(target.ca).toMatch(/\.pem$/);
        const client = createAgentdClient({ baseUrl: target.url, token: target.token, ca: target.ca! });
        expectOk(await client.listAgents());
        await client.close();
      });

      it("without `ca`, the self-signed certificate is refused with an error naming the URL and the problem", async () => {
        const client = createAgentdClient({ baseUrl: target.url, token: target.token });
        const error = await client.listAgents().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(AgentdNetworkError);
        expect((error as Error).message).toContain(`${target.url}/agents`);
        expect((error as Error).message).toMatch(/self[- ]signed certificate/);
      });
    });
  }
});

// The client on its own: an observed fetch answers, nothing is sent anywhere.
describe("client behaviour without a network", () => {
  const json = (status: number, body: unknown): Response => Response.json(body, { status });
  const agent = (): AgentStatus => ({ ...pausable, origin_uuid: "6f1c3c6e-2b7a-4f5e-9a0d-3c2b1a0f9e8d" });

  it("the middleware adds X-Auth-Token to every operation, typed and raw", async () => {
    const { client, requests } = createObservedClient(
      (request) => (request.method === "POST" ? new Response(null, { status: 204 }) : json(200, request.url.endsWith("/agents") ? [agent()] : agent())),
      { token: "secret-token" },
    );
    expectOk(await client.listAgents());
    expectOk(await client.getAgentById(1));
    expectOk(await client.getAgentByNumber("1001"));
    expectOk(await client.pauseAgentByNumber("1001", "x"));
    expectOk(await client.unpauseAgentByNumber("1001"));
    await client.raw.GET("/agents");
    expect(requests.map((r) => `${r.method} ${r.url.slice(OBSERVED_BASE_URL.length)}`)).toEqual([
      "GET /agents",
      "GET /agents/by-id/1",
      "GET /agents/by-number/1001",
      "POST /agents/by-number/1001/pause",
      "POST /agents/by-number/1001/unpause",
      "GET /agents",
    ]);
    expect(requests.map((r) => r.headers.get("x-auth-token"))).toEqual(Array(6).fill("secret-token"));
  });

  // Found by review: the check of the token's characters refused the line break that ends a
  // token read from a file, which fetch drops from a header value and had always sent fine.
  it("takes a token with whitespace around it, as read from a file, and sends it without", async () => {
    const { client, requests } = createObservedClient(() => json(200, [agent()]), { token: " secret-token\n" });
    expectOk(await client.listAgents());
    expect(requests[0]!.headers.get("x-auth-token")).toBe("secret-token");
  });

  // Found by review: a page served from the service's origin (or behind a dev server's proxy)
  // gives the client a relative base URL, which fetch resolves against the page.
  it("takes a relative base URL where there is a document to resolve it against, and only there", () => {
    expect(baseUrlProblem("/1.0", "https://supervisor.example.com/app/")).toBeUndefined();
    expect(baseUrlProblem("/1.0", undefined)).toBe("is not an absolute URL (such as https://localhost:9493/1.0)");
    expect(baseUrlProblem("ftp://x/1.0", "https://supervisor.example.com/")).toBe("has the scheme ftp: where https: (or http:, for the mocks) is expected");
    // A host without its scheme is not a path of the page's server.
    expect(baseUrlProblem("agentd.example.com/1.0", "https://supervisor.example.com/app/")).toBe("is not an absolute URL (such as https://localhost:9493/1.0)");
  });

  it("sends an unpause with no body and no Content-Type, as the 17.05 Python client does", async () => {
    const { client, requests } = createObservedClient(() => new Response(null, { status: 204 }));
    expect(await client.unpauseAgentByNumber("1001")).toEqual({ ok: true, status: 204, data: undefined });
    expect(requests[0]!.method).toBe("POST");
    expect(await requests[0]!.text()).toBe("");
    expect(requests[0]!.headers.get("content-type")).toBeNull();
  });

  it("sends a pause without a reason with no body, and with one as a PauseRequest", async () => {
    const { client, requests } = createObservedClient(() => new Response(null, { status: 204 }));
    await client.pauseAgentByNumber("1001");
    await client.pauseAgentByNumber("1001", "lunch");
    expect(await requests[0]!.text()).toBe("");
    expect(await requests[1]!.json()).toEqual({ reason: "lunch" });
  });

  it("maps answers to results: data on success, the contract's Error body otherwise, a labelled error for a foreign body", async () => {
    const answers = [
      new Response(null, { status: 204 }),
      json(409, { error: "not logged in" }),
      new Response("<html>Bad Gateway</html>", { status: 502, headers: { "content-type": "text/html" } }),
      json(500, { message: "not our shape" }),
    ];
    const { client } = createObservedClient(() => answers.shift()!);
    expect(await client.pauseAgentByNumber("1001")).toEqual({ ok: true, status: 204, data: undefined });
    expect(await client.pauseAgentByNumber("1001")).toEqual({ ok: false, status: 409, error: { error: "not logged in" } });
    expect(await client.pauseAgentByNumber("1001")).toEqual({
      ok: false,
      status: 502,
      error: { error: "unexpected response (HTTP 502) without an error body" },
    });
    expect(await client.pauseAgentByNumber("1001")).toEqual({
      ok: false,
      status: 500,
      error: { error: "unexpected response (HTTP 500) without an error body" },
    });
  });

  it("requires a base URL and a token, and refuses `ca` with a custom fetch", () => {
    // As documented: a configuration the client cannot use is an AgentdConfigError.
    const refusals: [() => unknown, RegExp][] = [
      [() => createAgentdClient({ baseUrl: OBSERVED_BASE_URL, token: "" }), /token is required/],
      [() => createAgentdClient({ baseUrl: "", token: "t" }), /baseUrl is required/],
      [() => createAgentdClient({ baseUrl: OBSERVED_BASE_URL, token: "t", ca: "x.pem", fetch: (r) => fetch(r) }), /cannot be combined/],
      // fetch would throw a bare TypeError at the first request for each of these.
      [() => createAgentdClient({ baseUrl: "127.0.0.1:9493/1.0", token: "t" }), /baseUrl is not an absolute URL \(such as https:\/\/localhost:9493\/1\.0\)/],
      [() => createAgentdClient({ baseUrl: "not a url", token: "t" }), /baseUrl is not an absolute URL/],
      [() => createAgentdClient({ baseUrl: "ftp://localhost/1.0", token: "t" }), /baseUrl has the scheme ftp: where https: \(or http:, for the mocks\) is expected/],
      [() => createAgentdClient({ baseUrl: "https://user:secret@localhost/1.0", token: "t" }), /baseUrl holds a user name or password, which the service does not read: it takes only a token$/],
      [() => createAgentdClient({ baseUrl: "https://localhost/1.0?x=1", token: "t" }), /baseUrl has a query or a fragment/],
      [() => createAgentdClient({ baseUrl: OBSERVED_BASE_URL, token: "tok\u20acn" }), /token holds a character a token cannot hold \(U\+20AC at position 4\)/],
      [() => createAgentdClient({ baseUrl: OBSERVED_BASE_URL, token: "sjLZzwsAC9PW\u2026" }), /U\+2026 at position 13/],
      [() => createAgentdClient({ baseUrl: OBSERVED_BASE_URL, token: "two words" }), /U\+0020 at position 4/],
      [() => createAgentdClient({ baseUrl: OBSERVED_BASE_URL, token: "li\tne\n" }), /U\+0009 at position 3/],
    ];
    for (const [create, message] of refusals) {
      expect(create).toThrow(message);
      expect(create).toThrow(AgentdConfigError);
    }
  });

  // Found by a front-end developer's walk: `/agents/by-number//pause` answered the
  // 404 `not found`, which is none of the operation's errors.
  it("refuses an empty agent number, or . or .., before any request", async () => {
    const sent: string[] = [];
    const client = createAgentdClient({ baseUrl: OBSERVED_BASE_URL, token: "t", fetch: (request) => (sent.push(request.url), fetch(request)) });
    for (const call of [() => client.getAgentByNumber(""), () => client.pauseAgentByNumber("", "x"), () => client.unpauseAgentByNumber("")]) {
      await expect(call()).rejects.toSatisfy((e: unknown) => e instanceof AgentdConfigError && /ByNumber: the agent number is empty$/.test(e.message));
    }
    // Found by the review of that change: `..` made GET /agents/by-number/.. the list, answered as one agent.
    for (const call of [() => client.getAgentByNumber(".."), () => client.pauseAgentByNumber("."), () => client.unpauseAgentByNumber("..")]) {
      await expect(call()).rejects.toSatisfy((e: unknown) => e instanceof AgentdConfigError && /ByNumber: the agent number is "\.\.?", a path segment URL parsing removes$/.test(e.message));
    }
    expect(sent).toEqual([]);
  });
});

describe("network failures", () => {
  // Found by a front-end developer's walk: a page's own cancel (on leaving a
  // screen) or time-out was reported as the network failing.
  it("a call cancelled by its signal rejects with the signal's own error (AbortError, TimeoutError), not AgentdNetworkError", async () => {
    // A server that takes requests and never answers them.
    const silent = createHttpServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const client = createAgentdClient({ baseUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}${BASE_PATH}`, token: "t" });
      await expect(client.listAgents({ signal: AbortSignal.timeout(100) })).rejects.toMatchObject({ name: "TimeoutError" });
      const controller = new AbortController();
      const pausing = client.pauseAgentByNumber("1001", "lunch", { signal: controller.signal });
      setTimeout(() => controller.abort(), 100);
      await expect(pausing).rejects.toMatchObject({ name: "AbortError" });
      for (const call of [() => client.getAgentById(1, { signal: AbortSignal.abort() }), () => client.getAgentByNumber("1001", { signal: AbortSignal.abort() }), () => client.unpauseAgentByNumber("1001", { signal: AbortSignal.abort() })]) {
        await expect(call()).rejects.toMatchObject({ name: "AbortError" });
      }
      // Found by the review of that change: a fetch that failed on its own after the abort was thrown as it was.
      const failing = createAgentdClient({
        baseUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}${BASE_PATH}`,
        token: "t",
        fetch: () => new Promise((_, reject) => setTimeout(() => reject(new TypeError("fetch failed")), 300)),
      });
      await expect(failing.listAgents({ signal: AbortSignal.timeout(50) })).rejects.toMatchObject({ name: "TimeoutError" });
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it("an unreachable URL raises AgentdNetworkError naming the URL and the cause", async () => {
    const port = await freePort(); // released again: nothing listens there
    const baseUrl = `http://127.0.0.1:${port}${BASE_PATH}`;
    const client = createAgentdClient({ baseUrl, token: "t" });
    const error = await client.listAgents().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AgentdNetworkError);
    const e = error as AgentdNetworkError;
    expect(e.url).toBe(`${baseUrl}/agents`);
    expect(e.code).toBe("ECONNREFUSED");
    expect(e.message).toContain(`${baseUrl}/agents`);
    expect(e.message).toContain("ECONNREFUSED");
  });

  it("the raw client raises the same error", async () => {
    const port = await freePort();
    const client = createAgentdClient({ baseUrl: `http://127.0.0.1:${port}`, token: "t" });
    await expect(client.raw.GET("/agents")).rejects.toBeInstanceOf(AgentdNetworkError);
  });
});

describe("TLS with a self-signed certificate", () => {
  let server: Server;
  let baseUrl: string;
  let certPem: string;
  let otherCertPem: string;
  let tmp: string;
  let certFile: string;
  const receivedTokens: (string | undefined)[] = [];
  const agent: AgentStatus = { ...loggedOut(7), origin_uuid: "6f1c3c6e-2b7a-4f5e-9a0d-3c2b1a0f9e8d" };

  beforeAll(async () => {
    const altNames = { name: "subjectAltName" as const, altNames: [{ type: 2 as const, value: "localhost" }, { type: 7 as const, ip: "127.0.0.1" }] };
    const pems = await generate([{ name: "commonName", value: "localhost" }], {
      keySize: 2048,
      algorithm: "sha256",
      extensions: [altNames],
    });
    certPem = pems.cert;
    otherCertPem = (await generate([{ name: "commonName", value: "localhost" }], { algorithm: "sha256", extensions: [altNames] })).cert;
    tmp = await mkdtemp(path.join(tmpdir(), "agentd-client-test-"));
    certFile = path.join(tmp, "server.pem");
    await writeFile(certFile, certPem);

    server = createHttpsServer({ key: pems.private, cert: pems.cert }, (req, res) => {
      receivedTokens.push(req.headers["x-auth-token"] as string | undefined);
      if (req.url === `${BASE_PATH}/agents/by-id/7`) {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(agent));
      } else {
        res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "no such agent" }));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}${BASE_PATH}`;
  });

  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it("is rejected without `ca`, with an error naming the URL and the certificate problem", async () => {
    const client = createAgentdClient({ baseUrl, token: "t" });
    const error = await client.getAgentById(7).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AgentdNetworkError);
    expect((error as AgentdNetworkError).code).toBe("DEPTH_ZERO_SELF_SIGNED_CERT");
    expect((error as Error).message).toContain(`${baseUrl}/agents/by-id/7`);
    expect((error as Error).message).toMatch(/self[- ]signed certificate/);
  });

  it("is accepted with `ca` as a PEM string, and the token still arrives", async () => {
    receivedTokens.length = 0;
    const client = createAgentdClient({ baseUrl, token: "tls-token", ca: certPem });
    expect(await client.getAgentById(7)).toEqual({ ok: true, status: 200, data: agent });
    expect(await client.getAgentById(8)).toEqual({ ok: false, status: 404, error: { error: "no such agent" } });
    expect(receivedTokens).toEqual(["tls-token", "tls-token"]);
    await client.close();
  });

  it("is accepted with `ca` as a path to a PEM file", async () => {
    const client = createAgentdClient({ baseUrl, token: "t", ca: certFile });
    expect(await client.getAgentById(7)).toEqual({ ok: true, status: 200, data: agent });
    await client.close();
  });

  it("trusts only that certificate, for that client only, without touching global TLS settings", async () => {
    const trusting = createAgentdClient({ baseUrl, token: "t", ca: certPem });
    expectOk(await trusting.getAgentById(7));

    // Another certificate for the same name is not trusted.
    const wrongCa = createAgentdClient({ baseUrl, token: "t", ca: otherCertPem });
    await expect(wrongCa.getAgentById(7)).rejects.toBeInstanceOf(AgentdNetworkError);
    // Host names are still checked: the certificate does not name this host.
    const wrongHost = createAgentdClient({ baseUrl: baseUrl.replace("127.0.0.1", "127.0.0.2"), token: "t", ca: certPem });
    await expect(wrongHost.getAgentById(7)).rejects.toThrow(/127\.0\.0\.2/);
    // The process-wide fetch and a client without `ca` still refuse the certificate.
    await expect(fetch(`${baseUrl}/agents/by-id/7`)).rejects.toThrow();
    await expect(createAgentdClient({ baseUrl, token: "t" }).getAgentById(7)).rejects.toBeInstanceOf(AgentdNetworkError);
    expect(process.env.NODE_TLS_REJECT_UNAUTHORIZED).toBeUndefined();
    await Promise.all([trusting.close(), wrongCa.close(), wrongHost.close()]);
  });

  it("a `ca` without a certificate that parses raises AgentdConfigError, not the server's certificate refused", async () => {
    const notPem = path.join(tmp, "hostname.txt");
    await writeFile(notPem, "agentd-host\n");
    const brokenPem = path.join(tmp, "broken.pem");
    await writeFile(brokenPem, "-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n");
    const keyOnly = "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n";
    const cases: [string, RegExp][] = [
      [notPem, new RegExp(`CA certificate file ${escapeRegExp(notPem)} holds no PEM certificate`)],
      [brokenPem, new RegExp(`CA certificate file ${escapeRegExp(brokenPem)} holds a PEM certificate that cannot be read`)],
      [keyOnly, /the `ca` option holds no PEM certificate/],
    ];
    for (const [ca, message] of cases) {
      const client = createAgentdClient({ baseUrl, token: "t", ca });
      await expect(client.getAgentById(7)).rejects.toSatisfy((e: unknown) => e instanceof AgentdConfigError && message.test(e.message));
    }
    // A file with text before its certificate, as `openssl x509 -text` writes one, is still a certificate.
    const annotated = path.join(tmp, "annotated.pem");
    await writeFile(annotated, `subject=CN = localhost\n${certPem}`);
    const client = createAgentdClient({ baseUrl, token: "t", ca: annotated });
    expect(await client.getAgentById(7)).toEqual({ ok: true, status: 200, data: agent });
    await client.close();
  });

  it("an unreadable `ca` file raises AgentdConfigError naming the file", async () => {
    const missing = path.join(tmp, "missing.pem");
    const client = createAgentdClient({ baseUrl, token: "t", ca: missing });
    await expect(client.getAgentById(7)).rejects.toSatisfy(
      (e: unknown) => e instanceof AgentdConfigError && e.message.includes(missing),
    );
  });
});

describe("browser path", () => {
  // Follows the static imports of client/index.ts (not the dynamic import of
  // node-tls) and checks none of them needs Node.
  it("client/index.ts statically imports nothing Node-only", () => {
    const seen = new Set<string>();
    const external = new Set<string>();
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.ES2022);
      for (const statement of source.statements) {
        if (!(ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement))) continue;
        const spec = statement.moduleSpecifier;
        if (!spec || !ts.isStringLiteral(spec)) continue;
        if (spec.text.startsWith(".")) visit(path.resolve(path.dirname(file), spec.text.replace(/\.js$/, ".ts")));
        else external.add(spec.text);
      }
    };
    visit(path.join(repoRoot, "client/index.ts"));
    expect([...external]).toEqual(["openapi-fetch"]);
    expect([...seen].map((f) => path.relative(repoRoot, f)).sort()).toEqual([
      "client/checks.ts",
      "client/errors.ts",
      "client/index.ts",
      "generated/openapi.ts",
    ]);
  });

  // What a web app's bundler (Vite, esbuild, webpack) does with `agentd/client`:
  // it follows the on-demand import of node-tls.js too, and package.json's
  // `browser` field must send it to the browser stand-in, or the build fails on
  // undici and node:fs.
  it("bundles for the browser (esbuild, platform browser) without a Node module, and `ca` then says it is Node only", async () => {
    const { build } = await import("esbuild");
    const dir = await mkdtemp(path.join(tmpdir(), "agentd-browser-client-"));
    try {
      const outfile = path.join(dir, "browser-client.mjs");
      const { metafile } = await build({
        entryPoints: [path.join(repoRoot, "dist", "client", "index.js")],
        absWorkingDir: repoRoot,
        bundle: true,
        platform: "browser",
        format: "esm",
        outfile,
        metafile: true,
        logLevel: "silent",
      });
      expect(Object.keys(metafile.inputs).sort()).toEqual([
        "dist/client/checks.js",
        "dist/client/errors.js",
        "dist/client/index.js",
        "dist/client/node-tls-browser.js",
        expect.stringMatching(/^node_modules\/openapi-fetch\//),
      ]);
      const bundled = (await import(outfile)) as typeof import("../client/index.js");
      // Refused before any connection: nothing listens on the discard port.
      const client = bundled.createAgentdClient({ baseUrl: "https://127.0.0.1:9/1.0", token: "t", ca: "server.pem" });
      await expect(client.getAgentById(7)).rejects.toSatisfy(
        (e: unknown) => e instanceof bundled.AgentdConfigError && /Node only/.test(e.message),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
