// The places the client-level suites (test/contract-suite.test.ts,
// test/client.test.ts) run their behaviour tests, behind one interface, so
// each test is written once, through the typed client:
//
// - "server": the real server in process (HTTPS, fresh PGlite, test tokens);
// - "mock":   a real `prism mock openapi.yaml` process, which knows no state
//             (it answers with the contract's examples; `Prefer: code=…`
//             selects an error response);
// - "proxy":  a real `prism proxy openapi.yaml <server> --errors` in front of
//             a real server. Every answer that passes through it is recorded,
//             and `violations()` lists whatever Prism flagged: an
//             `sl-violations` header, a Prism problem+json answer, or a
//             violation/error line in Prism's log;
// - "external": a server this process did not start (a URL and a token), for
//             running the client suite against a real deployment.
import { existsSync } from "node:fs";
import path from "node:path";
import { createAgentdClient, type AgentdClient, type FetchLike } from "../../client/index.js";
import { createTrustingFetch } from "../../client/node-tls.js";
import type { AgentRecord } from "../../server/store/agent-store.js";
import { startPrism, type PrismHandle } from "./prism.js";
import { ADMIN_TOKEN, startTestServer, type TestServer } from "./server.js";

export type TargetName = "server" | "mock" | "proxy";

export interface TargetOptions {
  /** Agents the server behind the target is loaded with before the tests (server and proxy; the mock has none). */
  agents?: readonly AgentRecord[];
}

export interface ClientOptions {
  /** Token to send instead of the target's all-powerful one. */
  token?: string;
  /** Drop X-Auth-Token from every request (the client always adds one). */
  noToken?: boolean;
  /** `Prefer` header, for the mock only: `code=404` makes Prism answer the contract's 404. */
  prefer?: string;
}

export interface Target {
  name: TargetName | "external";
  /** The target keeps state: a pause is visible on the next read, unknown agents are 404s, tokens are checked. */
  stateful: boolean;
  /** The base URL its clients use (Prism serves the contract's paths without the base path). */
  url: string;
  /** The token its clients send unless told otherwise. */
  token: string;
  /** What to trust for its HTTPS certificate (a PEM file, or for an external server whatever was given); null over plain HTTP. */
  ca: string | null;
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

/** A fetch that lets a test rewrite the headers of every request before `base` sends it. */
function headerFetch(
  base: FetchLike,
  rewrite: (headers: Headers) => void,
  onResponse: (request: Request, response: Response) => void = () => {},
): FetchLike {
  return async (request) => {
    const headers = new Headers(request.headers);
    rewrite(headers);
    const response = await base(new Request(request, { headers }));
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

/** Tracks clients and fetches so close() can release their connection pools. */
function clientPool() {
  const closers: (() => Promise<void>)[] = [];
  return {
    add(client: AgentdClient): AgentdClient {
      closers.push(() => client.close());
      return client;
    },
    /** The client's own trusting fetch (client/node-tls.ts), for requests a test rewrites: a custom fetch cannot be combined with `ca`. */
    async trusting(ca: string): Promise<FetchLike> {
      const trusting = await createTrustingFetch(ca);
      closers.push(() => trusting.close());
      return trusting;
    },
    closeAll: async () => {
      await Promise.all(closers.splice(0).map((close) => close()));
    },
  };
}

/** Only the mock understands `Prefer`. */
function refusePrefer(options: ClientOptions): void {
  if (options.prefer !== undefined) throw new Error("Prefer only makes sense against the mock");
}

export async function startServerTarget(env: Record<string, string> = {}, options: TargetOptions = {}): Promise<Target> {
  const server = await startTestServer(env, options.agents);
  try {
    return serverTarget(server, options, await createTrustingFetch(server.ca));
  } catch (error) {
    await server.close();
    throw error;
  }
}

function serverTarget(server: TestServer, options: TargetOptions, trusting: FetchLike & { close(): Promise<void> }): Target {
  const pool = clientPool();
  const variants: Target[] = [];
  return {
    name: "server",
    stateful: true,
    url: server.url,
    token: ADMIN_TOKEN,
    ca: server.running.certPath,
    client(clientOptions = {}) {
      refusePrefer(clientOptions);
      if (clientOptions.noToken) {
        return pool.add(createAgentdClient({ baseUrl: server.url, token: "unused", fetch: headerFetch(trusting, rewriter(clientOptions)) }));
      }
      return pool.add(createAgentdClient({ baseUrl: server.url, token: clientOptions.token ?? ADMIN_TOKEN, ca: server.ca }));
    },
    createToken: (acls) => server.createToken(acls),
    async variant(env) {
      const v = await startServerTarget({ ...sameTls(server), ...env }, options);
      variants.push(v);
      return v;
    },
    withContract: () => Promise.reject(new Error("only the proxy validates against a contract")),
    takeViolations: () => [],
    async close() {
      await Promise.all(variants.map((v) => v.close()));
      await pool.closeAll();
      await trusting.close();
      await server.close();
    },
  };
}

/**
 * A server this process did not start, at `url` with `token` (trusting `ca`,
 * a PEM string or file, when given). It keeps state, but the test knows
 * neither its agents nor how to make tokens.
 */
export async function startExternalTarget(url: string, token: string, ca?: string): Promise<Target> {
  const pool = clientPool();
  // What a rewritten request goes through: the client's own trusting fetch when there is a CA.
  const base = ca === undefined ? globalFetch : await pool.trusting(ca);
  const unsupported = (what: string) => (): Promise<never> => Promise.reject(new Error(`an external server: this test cannot ${what}`));
  return {
    name: "external",
    stateful: true,
    url,
    token,
    ca: ca ?? null,
    client(options = {}) {
      refusePrefer(options);
      const clientToken = options.token ?? token;
      if (options.noToken) return pool.add(createAgentdClient({ baseUrl: url, token: clientToken, fetch: headerFetch(base, rewriter(options)) }));
      return pool.add(createAgentdClient({ baseUrl: url, token: clientToken, ...(ca === undefined ? {} : { ca }) }));
    },
    createToken: unsupported("create tokens"),
    variant: unsupported("reconfigure it"),
    withContract: unsupported("validate it against another contract"),
    takeViolations: () => [],
    close: () => pool.closeAll(),
  };
}

/** Prism checks only that a token is present. */
const MOCK_TOKEN = "mock-token";

export async function startMockTarget(): Promise<Target> {
  const prism = await startPrism({ mode: "mock" });
  const pool = clientPool();
  return {
    name: "mock",
    stateful: false,
    url: prism.url,
    token: MOCK_TOKEN,
    ca: null,
    client(options = {}) {
      return pool.add(
        createAgentdClient({ baseUrl: prism.url, token: options.token ?? MOCK_TOKEN, fetch: headerFetch(globalFetch, rewriter(options)) }),
      );
    },
    createToken: () => Promise.reject(new Error("the mock checks no ACL: it has no tokens to create")),
    variant: () => Promise.reject(new Error("the mock has no server configuration")),
    withContract: () => Promise.reject(new Error("only the proxy validates against a contract")),
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

export async function startProxyTarget(env: Record<string, string> = {}, options: TargetOptions = {}): Promise<Target> {
  return proxyInFront(await startTestServer(env, options.agents), options, true);
}

/** A Prism proxy in front of `server`; closes the server too when it owns it. */
async function proxyInFront(server: TestServer, options: TargetOptions, ownsServer: boolean, spec?: string): Promise<Target> {
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
    url: prism.url,
    token: ADMIN_TOKEN,
    ca: null,
    client(clientOptions = {}) {
      refusePrefer(clientOptions);
      return pool.add(
        createAgentdClient({
          baseUrl: prism.url,
          token: clientOptions.token ?? ADMIN_TOKEN,
          fetch: headerFetch(globalFetch, rewriter(clientOptions), record),
        }),
      );
    },
    createToken: (acls) => server.createToken(acls),
    async variant(env) {
      const v = await proxyInFront(await startTestServer({ ...sameTls(server), ...env }, options.agents), options, true, spec);
      variants.push(v);
      return v;
    },
    async withContract(otherSpec) {
      const v = await proxyInFront(server, options, false, otherSpec);
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

/**
 * The client suites' stateless target (test/client.test.ts, test/agentctl.test.ts):
 * a running server when AGENTD_CLIENT_TEST_URL and AGENTD_CLIENT_TEST_TOKEN
 * (optional AGENTD_CLIENT_TEST_CA) are set, else the Prism mock.
 */
export function startMockOrExternalTarget(): Promise<Target> {
  const url = process.env.AGENTD_CLIENT_TEST_URL;
  if (!url) return startMockTarget();
  const token = process.env.AGENTD_CLIENT_TEST_TOKEN;
  if (!token) throw new Error("AGENTD_CLIENT_TEST_URL is set but AGENTD_CLIENT_TEST_TOKEN is not");
  return startExternalTarget(url, token, process.env.AGENTD_CLIENT_TEST_CA || undefined);
}

export function startTarget(name: TargetName, options: TargetOptions = {}): Promise<Target> {
  if (name === "server") return startServerTarget({}, options);
  if (name === "mock") return startMockTarget();
  return startProxyTarget({}, options);
}

// Looked up per call, as the client does, so a test that replaces it is honoured.
const globalFetch: FetchLike = (request) => fetch(request);
