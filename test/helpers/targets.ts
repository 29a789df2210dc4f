// The three places the contract suite (test/contract-suite.test.ts) runs its
// behaviour tests, behind one interface, so each test is written once,
// through the typed client:
//
// - "server": the real server in process (HTTPS, fresh PGlite, test tokens);
// - "mock":   a real `prism mock openapi.yaml` process, which knows no state
//             (it answers with the contract's examples; `Prefer: code=…`
//             selects an error response);
// - "proxy":  a real `prism proxy openapi.yaml <server> --errors` in front of
//             a real server. Every answer that passes through it is recorded,
//             and `violations()` lists whatever Prism flagged: an
//             `sl-violations` header, a Prism problem+json answer, or a
//             violation/error line in Prism's log.
import { existsSync } from "node:fs";
import path from "node:path";
import { createAgentdClient, type AgentdClient } from "../../client/index.js";
import { startPrism, type PrismHandle } from "./prism.js";
import { ADMIN_TOKEN, startTestServer, type TestServer } from "./server.js";

export type TargetName = "server" | "mock" | "proxy";

export interface ClientOptions {
  /** Token to send instead of the target's all-powerful one. */
  token?: string;
  /** Drop X-Auth-Token from every request (the client always adds one). */
  noToken?: boolean;
  /** `Prefer` header, for the mock only: `code=404` makes Prism answer the contract's 404. */
  prefer?: string;
}

export interface Target {
  name: TargetName;
  /** The target keeps state: a pause is visible on the next read, unknown agents are 404s, tokens are checked. */
  stateful: boolean;
  client(options?: ClientOptions): AgentdClient;
  /** A token with exactly these ACLs (stateful targets only). */
  createToken(acls: string[]): Promise<string>;
  /** The same target in front of a server started with extra environment (stateful targets only). */
  variant(env: Record<string, string>): Promise<Target>;
  /** Proxy only: another Prism proxy, validating against `spec`, in front of the same server. */
  withContract(spec: string): Promise<Target>;
  /** What Prism reported as contract violations since the last call (proxy only; empty elsewhere). */
  takeViolations(): string[];
  close(): Promise<void>;
}

/** Lets a test rewrite the headers of every request the client sends. */
function headerFetch(
  rewrite: (headers: Headers) => void,
  onResponse: (request: Request, response: Response) => void = () => {},
): (request: Request) => Promise<Response> {
  return async (request) => {
    const headers = new Headers(request.headers);
    rewrite(headers);
    const response = await fetch(new Request(request, { headers }));
    onResponse(request, response);
    return response;
  };
}

function rewriter(options: ClientOptions): (headers: Headers) => void {
  return (headers) => {
    if (options.noToken) headers.delete("X-Auth-Token");
    if (options.prefer !== undefined) headers.set("Prefer", options.prefer);
  };
}

/** Tracks clients so close() can release their connection pools. */
function clientPool() {
  const clients: AgentdClient[] = [];
  return {
    add(client: AgentdClient): AgentdClient {
      clients.push(client);
      return client;
    },
    closeAll: () => Promise.all(clients.splice(0).map((c) => c.close())),
  };
}

export async function startServerTarget(env: Record<string, string> = {}): Promise<Target> {
  const server = await startTestServer(env);
  return serverTarget(server);
}

function serverTarget(server: TestServer): Target {
  const pool = clientPool();
  const variants: Target[] = [];
  return {
    name: "server",
    stateful: true,
    client(options = {}) {
      if (options.prefer !== undefined) throw new Error("Prefer only makes sense against the mock");
      if (options.noToken) {
        // A custom fetch cannot be combined with `ca`: use the server's own dispatcher.
        return pool.add(
          createAgentdClient({
            baseUrl: server.url,
            token: "unused",
            fetch: dispatcherFetch(server, rewriter(options)),
          }),
        );
      }
      return pool.add(createAgentdClient({ baseUrl: server.url, token: options.token ?? ADMIN_TOKEN, ca: server.ca }));
    },
    createToken: (acls) => server.createToken(acls),
    async variant(env) {
      const v = await startServerTarget({ ...sameTls(server), ...env });
      variants.push(v);
      return v;
    },
    withContract: async () => {
      throw new Error("only the proxy validates against a contract");
    },
    takeViolations: () => [],
    async close() {
      await Promise.all(variants.map((v) => v.close()));
      await pool.closeAll();
      await server.close();
    },
  };
}

// undici's fetch with the test server's dispatcher (which trusts its certificate).
function dispatcherFetch(server: TestServer, rewrite: (headers: Headers) => void): (request: Request) => Promise<Response> {
  return async (request) => {
    const { fetch: undiciFetch } = await import("undici");
    const headers = new Headers(request.headers);
    rewrite(headers);
    const pairs: [string, string][] = [];
    headers.forEach((value, name) => pairs.push([name, value]));
    const hasBody = request.method !== "GET" && request.method !== "HEAD";
    const response = await undiciFetch(request.url, {
      method: request.method,
      headers: pairs,
      body: hasBody ? await request.arrayBuffer() : undefined,
      dispatcher: server.dispatcher,
    });
    return response as unknown as Response;
  };
}

export async function startMockTarget(): Promise<Target> {
  const prism = await startPrism({ mode: "mock" });
  const pool = clientPool();
  return {
    name: "mock",
    stateful: false,
    client(options = {}) {
      return pool.add(
        createAgentdClient({ baseUrl: prism.url, token: options.token ?? "mock-token", fetch: headerFetch(rewriter(options)) }),
      );
    },
    createToken: async () => {
      throw new Error("the mock checks no ACL: it has no tokens to create");
    },
    variant: async () => {
      throw new Error("the mock has no server configuration");
    },
    withContract: async () => {
      throw new Error("only the proxy validates against a contract");
    },
    takeViolations: () => [],
    async close() {
      await pool.closeAll();
      await prism.stop();
    },
  };
}

// Prism's log lines that mean it found something wrong with a request or a
// response (`Violation: …` from the validator; `Request terminated with
// error` when it answered itself, e.g. the VIOLATIONS problem of --errors).
const PRISM_PROBLEM_LINE = /Violation:|VIOLATIONS|Request terminated with error|✖/;

// startPrism's readiness probe (`GET /`, which no route matches); its log
// line can arrive after startPrism returns. The suite never requests `/`.
const STARTUP_PROBE = /\[HTTP SERVER\] get \/ .*NO_PATH_MATCHED_ERROR/;

export async function startProxyTarget(env: Record<string, string> = {}): Promise<Target> {
  return proxyInFront(await startTestServer(env), true);
}

/** A Prism proxy in front of `server`; closes the server too when it owns it. */
async function proxyInFront(server: TestServer, ownsServer: boolean, spec?: string): Promise<Target> {
  let prism: PrismHandle;
  try {
    prism = await startPrism({
      mode: "proxy",
      upstream: server.url,
      errors: true,
      upstreamCa: server.running.certPath,
      ...(spec === undefined ? {} : { spec }),
    });
  } catch (error) {
    if (ownsServer) await server.close();
    throw error;
  }
  let logSeen = 0;
  const flagged: string[] = [];
  const pool = clientPool();
  const variants: Target[] = [];

  const record = (request: Request, response: Response): void => {
    const where = `${request.method} ${new URL(request.url).pathname} -> ${response.status}`;
    const header = response.headers.get("sl-violations");
    if (header !== null) flagged.push(`${where}: sl-violations ${header}`);
    if ((response.headers.get("content-type") ?? "").startsWith("application/problem+json")) {
      flagged.push(`${where}: Prism answered itself (problem+json)`);
    }
  };

  return {
    name: "proxy",
    stateful: true,
    client(options = {}) {
      if (options.prefer !== undefined) throw new Error("Prefer only makes sense against the mock");
      return pool.add(
        createAgentdClient({
          baseUrl: prism.url,
          token: options.token ?? ADMIN_TOKEN,
          fetch: headerFetch(rewriter(options), record),
        }),
      );
    },
    createToken: (acls) => server.createToken(acls),
    async variant(env) {
      const v = await proxyInFront(await startTestServer({ ...sameTls(server), ...env }), true, spec);
      variants.push(v);
      return v;
    },
    async withContract(otherSpec) {
      const v = await proxyInFront(server, false, otherSpec);
      variants.push(v);
      return v;
    },
    takeViolations() {
      const log = prism.output();
      const lines = log
        .slice(logSeen)
        .split("\n")
        .filter((line) => PRISM_PROBLEM_LINE.test(line) && !STARTUP_PROBE.test(line));
      logSeen = log.length;
      return [...flagged.splice(0), ...lines];
    },
    async close() {
      await Promise.all(variants.map((v) => v.close()));
      await pool.closeAll();
      await prism.stop();
      if (ownsServer) await server.close();
    },
  };
}

// A variant server reuses the certificate and key of the first one: the
// server generated them into its data directory, and making new ones only
// costs start-up time.
function sameTls(server: TestServer): Record<string, string> {
  const dir = path.dirname(server.running.certPath);
  const key = path.join(dir, "key.pem");
  return existsSync(key) ? { AGENTD_TLS_CERT: server.running.certPath, AGENTD_TLS_KEY: key } : {};
}

export function startTarget(name: TargetName): Promise<Target> {
  if (name === "server") return startServerTarget();
  if (name === "mock") return startMockTarget();
  return startProxyTarget();
}
