// The typed client (client/index.ts) against real processes. The behaviour
// tests run twice: against the Prism mock of openapi.yaml (or any running
// server when AGENTD_CLIENT_TEST_URL + AGENTD_CLIENT_TEST_TOKEN, optional
// AGENTD_CLIENT_TEST_CA, are set), and against the real server started here
// (HTTPS with its self-signed certificate, fresh PGlite). The TLS tests use
// their own HTTPS server with a certificate generated here.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer as createHttpsServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { readFileSync } from "node:fs";
import { generate } from "selfsigned";
import ts from "typescript";
import { BASE_PATH } from "../server/contract.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AgentdConfigError,
  AgentdNetworkError,
  createAgentdClient,
  type AgentdClientOptions,
  type AgentdResult,
  type AgentStatus,
} from "../client/index.js";
import { expectValid, loadContract, repoRoot } from "./helpers/contract.js";
import { freePort } from "./helpers/ports.js";
import { startPrism, type PrismHandle } from "./helpers/prism.js";
import { ADMIN_TOKEN, startTestServer, type TestServer } from "./helpers/server.js";
import { createTrustingFetch } from "../client/node-tls.js";

const contract = loadContract();

interface Target {
  baseUrl: string;
  token: string;
  ca?: string;
  /** Prism answers with the contract's examples and accepts any token. */
  isMock: boolean;
  /** A fetch that reaches the target (trusting its certificate), for tests that wrap the client's fetch. */
  fetch: (request: Request) => Promise<Response>;
  /** The real server started by this file, when the target is one. */
  server?: TestServer;
  stop(): Promise<void>;
}

type TargetKind = "mock" | "server";

async function startTarget(kind: TargetKind): Promise<Target> {
  if (kind === "server") {
    const server = await startTestServer();
    const trusting = await createTrustingFetch(server.ca);
    return {
      baseUrl: server.url,
      token: ADMIN_TOKEN,
      ca: server.ca,
      isMock: false,
      fetch: trusting,
      server,
      stop: async () => {
        await trusting.close();
        await server.close();
      },
    };
  }
  const url = process.env.AGENTD_CLIENT_TEST_URL;
  if (url) {
    const token = process.env.AGENTD_CLIENT_TEST_TOKEN;
    if (!token) throw new Error("AGENTD_CLIENT_TEST_URL is set but AGENTD_CLIENT_TEST_TOKEN is not");
    const ca = process.env.AGENTD_CLIENT_TEST_CA;
    if (ca) {
      const trusting = await createTrustingFetch(ca);
      return { baseUrl: url, token, ca, isMock: false, fetch: trusting, stop: () => trusting.close() };
    }
    return { baseUrl: url, token, isMock: false, fetch: (r) => fetch(r), stop: async () => {} };
  }
  const prism: PrismHandle = await startPrism({ mode: "mock" });
  return { baseUrl: prism.url, token: "client-test-token", isMock: true, fetch: (r) => fetch(r), stop: () => prism.stop() };
}

let target: Target;
// A custom fetch replaces `ca`: it is then target.fetch's job to trust the certificate.
const clientOptions = (extra: Partial<AgentdClientOptions> = {}): AgentdClientOptions => ({
  baseUrl: target.baseUrl,
  token: target.token,
  ...(target.ca && !extra.fetch ? { ca: target.ca } : {}),
  ...extra,
});

/** Narrows a result to success, failing with the error body otherwise. */
function expectOk<T>(result: AgentdResult<T>): T {
  if (!result.ok) throw new Error(`expected success, got ${result.status} ${JSON.stringify(result.error)}`);
  return result.data;
}

/** A fetch that forwards to the target's fetch after letting the test rewrite the request. */
function rewritingFetch(rewrite: (headers: Headers) => void): (request: Request) => Promise<Response> {
  return (request) => {
    const headers = new Headers(request.headers);
    rewrite(headers);
    return target.fetch(new Request(request, { headers }));
  };
}

const KINDS: { kind: TargetKind; label: string }[] = [
  { kind: "mock", label: process.env.AGENTD_CLIENT_TEST_URL ? "server at AGENTD_CLIENT_TEST_URL" : "Prism mock" },
  { kind: "server", label: "real server" },
];

describe.each(KINDS)("against the $label", ({ kind }) => {
  beforeAll(async () => {
    target = await startTarget(kind);
  });

  afterAll(async () => {
    await target?.stop();
  });

  describe("typed methods", () => {
    it("listAgents returns the contract's agent list", async () => {
      const client = createAgentdClient(clientOptions());
      const result = await client.listAgents();
      expect(result.ok).toBe(true);
      expect(result.status).toBe(200);
      const list: AgentStatus[] = expectOk(result);
      expectValid(contract.responseValidator("listAgents", 200), list);
      if (target.isMock) expect(list.map((a) => a.number)).toEqual(["1001", "1002", "1003"]);
      await client.close();
    });

    it("getAgentById and getAgentByNumber return one typed agent", async () => {
      const client = createAgentdClient(clientOptions());
      const [first] = expectOk(await client.listAgents());
      expect(first).toBeDefined();

      const byId = expectOk(await client.getAgentById(first!.id));
      expectValid(contract.responseValidator("getAgentById", 200), byId);
      const byNumber = expectOk(await client.getAgentByNumber(first!.number));
      expectValid(contract.responseValidator("getAgentByNumber", 200), byNumber);
      if (!target.isMock) {
        // Prism returns its first example whatever the path; only a server knows the agent.
        expect(byId).toEqual(first);
        expect(byNumber).toEqual(first);
      }
    });

    it("pauseAgentByNumber resolves to ok with no data, with and without a reason", async () => {
      const client = createAgentdClient(clientOptions());
      const logged = expectOk(await client.listAgents()).find((a) => a.logged);
      expect(logged, "the target has a logged-in agent").toBeDefined();

      const withReason = await client.pauseAgentByNumber(logged!.number, "lunch break");
      expect(withReason).toEqual({ ok: true, status: 204, data: undefined });
      if (!target.isMock) {
        const after = expectOk(await client.getAgentByNumber(logged!.number));
        expect(after).toMatchObject({ paused: true, paused_reason: "lunch break" });
      }
      const withoutReason = await client.pauseAgentByNumber(logged!.number);
      expect(withoutReason).toEqual({ ok: true, status: 204, data: undefined });
      if (!target.isMock) {
        const after = expectOk(await client.getAgentByNumber(logged!.number));
        expect(after).toMatchObject({ paused: true, paused_reason: null });
      }
    });

    it("an invalid path parameter comes back as a typed 400 with details", async () => {
      const client = createAgentdClient(clientOptions());
      const result = await client.getAgentByNumber("not-digits");
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.status).toBe(400);
      expectValid(contract.schemaValidator("Error"), result.error);
      expect(result.error.error).toBe("invalid request");
      expect(result.error.details?.some((d) => d.location === "path" && d.path === "agent_number")).toBe(true);
    });

    it("an unknown agent comes back as a typed 404 no such agent", async () => {
      // Prism cannot know which agents exist; ask it for the 404 response.
      const client = createAgentdClient(
        clientOptions(target.isMock ? { fetch: rewritingFetch((h) => h.set("Prefer", "code=404")) } : {}),
      );
      const result = await client.getAgentById(2147483647);
      expect(result).toEqual({ ok: false, status: 404, error: { error: "no such agent" } });
    });

    it("the raw typed client shares the token middleware", async () => {
      const client = createAgentdClient(clientOptions());
      const { data, error, response } = await client.raw.GET("/agents/by-id/{agent_id}", {
        params: { path: { agent_id: 1 } },
      });
      expect(response.status === 200 || response.status === 404).toBe(true);
      if (response.status === 200) expectValid(contract.responseValidator("getAgentById", 200), data);
      else expect(error).toEqual({ error: "no such agent" });
    });
  });

  describe("token", () => {
    it("is added as X-Auth-Token by the middleware on every operation", async () => {
      const seen: (string | null)[] = [];
      const client = createAgentdClient(
        clientOptions({
          fetch: (request) => {
            seen.push(request.headers.get("x-auth-token"));
            return target.fetch(request);
          },
        }),
      );
      expectOk(await client.listAgents());
      expectOk(await client.getAgentById(1)).id;
      await client.getAgentByNumber("1001");
      await client.pauseAgentByNumber("1001", "x");
      expect(seen).toEqual([target.token, target.token, target.token, target.token]);
    });

    it("a request without the token is a typed 401 (the target refuses it)", async () => {
      const client = createAgentdClient(clientOptions({ fetch: rewritingFetch((h) => h.delete("X-Auth-Token")) }));
      for (const result of [await client.listAgents(), await client.pauseAgentByNumber("1001")]) {
        expect(result).toEqual({ ok: false, status: 401, error: { error: "invalid token or unauthorized" } });
      }
    });

    it("an unknown token is a typed 401 on a server (Prism only checks that one is present)", async () => {
      const client = createAgentdClient(clientOptions({ token: "no-such-token" }));
      const result = await client.listAgents();
      if (target.isMock) expect(result.ok).toBe(true);
      else expect(result).toEqual({ ok: false, status: 401, error: { error: "invalid token or unauthorized" } });
    });

    it("is required, and `ca` cannot be combined with a custom fetch", () => {
      expect(() => createAgentdClient({ baseUrl: target.baseUrl, token: "" })).toThrow(/token is required/);
      expect(() =>
        createAgentdClient({ baseUrl: target.baseUrl, token: "t", ca: "x.pem", fetch: (r) => fetch(r) }),
      ).toThrow(/cannot be combined/);
    });
  });

  // What only a server with real data, tokens and a certificate can show.
  if (kind === "server") {
    describe("state, ACLs and the server's certificate", () => {
      const server = (): TestServer => target.server!;

      it("lists the demo agents, and a pause is visible in the list and by id", async () => {
        const client = createAgentdClient(clientOptions());
        const before = expectOk(await client.listAgents());
        expect(before.map((a) => a.number)).toEqual(["1001", "1002", "1003", "1004", "1005", "1006"]);
        expect(before.find((a) => a.number === "1005")).toMatchObject({ logged: true, paused: false });
        expect(await client.pauseAgentByNumber("1005", "client test")).toEqual({ ok: true, status: 204, data: undefined });
        const after = expectOk(await client.listAgents()).find((a) => a.number === "1005");
        expect(after).toMatchObject({ paused: true, paused_reason: "client test" });
        expect(expectOk(await client.getAgentById(after!.id))).toEqual(after);
        await client.close();
      });

      it("a logged-out agent is a typed 409, and a token without the ACL a typed 403", async () => {
        const client = createAgentdClient(clientOptions());
        expect(await client.pauseAgentByNumber("1002")).toEqual({ ok: false, status: 409, error: { error: "not logged in" } });
        const reader = createAgentdClient(clientOptions({ token: await server().createToken(["agentd.agents.read"]) }));
        expectOk(await reader.listAgents());
        expect(await reader.pauseAgentByNumber("1001")).toEqual({ ok: false, status: 403, error: { error: "insufficient permissions" } });
        await Promise.all([client.close(), reader.close()]);
      });

      it("trusts the server's certificate given as the PEM file the server wrote", async () => {
        const client = createAgentdClient(clientOptions({ ca: server().running.certPath }));
        expectOk(await client.listAgents());
        await client.close();
      });

      it("without `ca`, the self-signed certificate is refused with an error naming the URL and the problem", async () => {
        const client = createAgentdClient({ baseUrl: target.baseUrl, token: target.token });
        const error = await client.listAgents().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(AgentdNetworkError);
        expect((error as Error).message).toContain(`${target.baseUrl}/agents`);
        expect((error as Error).message).toMatch(/self[- ]signed certificate/);
      });
    });
  }
});

describe("network failures", () => {
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
  const agent: AgentStatus = {
    id: 7,
    origin_uuid: "6f1c3c6e-2b7a-4f5e-9a0d-3c2b1a0f9e8d",
    number: "1007",
    extension: null,
    context: null,
    logged: false,
    paused: false,
    paused_reason: null,
    state_interface: null,
  };

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
      "client/errors.ts",
      "client/index.ts",
      "generated/openapi.ts",
    ]);
  });
});
