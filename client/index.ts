// The typed client of the agent service, built on openapi-fetch and the types
// generated from openapi.yaml (generated/openapi.ts). It runs in browsers and in Node: nothing on this
// path imports a Node module. The `ca` option (Node only) loads
// ./node-tls.js on demand; a bundler building for browsers gets
// ./node-tls-browser.js there instead (package.json's `browser` field).
//
// Error handling, in one place:
// - every HTTP response that is not a success comes back as
//   `{ ok: false, status, error }` where `error` is the contract's Error body;
// - no HTTP response at all (connection refused, DNS, TLS, ...) throws an
//   AgentdNetworkError naming the URL and the cause;
// - options it cannot use throw an AgentdConfigError: at creation (a base URL
//   that is not an http(s) URL, a token that cannot go in a header), or for
//   a `ca` that cannot be read or holds no certificate, on the first request.
import createClient, { type Client, type Middleware } from "openapi-fetch";
import type { components, paths } from "../generated/openapi.js";
import { baseUrlProblem, tokenProblem } from "./checks.js";
import { AgentdConfigError, AgentdError, AgentdNetworkError } from "./errors.js";

export { AgentdConfigError, AgentdError, AgentdNetworkError } from "./errors.js";
export type { components, paths } from "../generated/openapi.js";

export type AgentStatus = components["schemas"]["AgentStatus"];
export type PauseRequest = components["schemas"]["PauseRequest"];

/** The answers of one operation, as the generated types list them. */
type ResponsesOf<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: infer R } ? R : never;

/** The stable identifiers the error answers of one operation carry, as the contract names them. */
export type ErrorIdOf<P extends keyof paths, M extends keyof paths[P]> = [ResponsesOf<P, M>] extends [never]
  ? never
  : {
      [S in keyof ResponsesOf<P, M>]: ResponsesOf<P, M>[S] extends { content: { "application/json": { error: infer E extends string } } } ? E : never;
    }[keyof ResponsesOf<P, M>];

/** Every stable identifier of the contract's error answers. */
export type ErrorId = {
  // Every key of a path item but its `parameters` is a method (one it lacks is `never`).
  [P in keyof paths]: { [M in Exclude<keyof paths[P], "parameters">]: ErrorIdOf<P, M> }[Exclude<keyof paths[P], "parameters">];
}[keyof paths];

/**
 * The contract's Error body. `error` is one of `E`, the identifiers the
 * operation's answers carry (your editor lists them), or another string:
 * an answer outside the operations (`not found` for a base URL without
 * `/1.0`), one from a proxy in between, or the client's own label for an
 * answer without an Error body (`unexpected response (HTTP 502) without an
 * error body`). A switch over identifiers keeps a default branch.
 */
export type ApiError<E extends string = ErrorId> = Omit<components["schemas"]["Error"], "error"> & { error: E | (string & {}) };

/** What every convenience method resolves to; `E`, the identifiers its errors can carry. */
export type AgentdResult<T, E extends string = ErrorId> =
  | { ok: true; status: number; data: T }
  | { ok: false; status: number; error: ApiError<E> };

export type FetchLike = (request: Request) => Promise<Response>;

export interface AgentdClientOptions {
  /** Base URL including the version prefix, e.g. `https://localhost:9493/1.0`. */
  baseUrl: string;
  /** Sent as `X-Auth-Token` on every request. */
  token: string;
  /**
   * Node only. A CA certificate to trust for this client only, as a PEM
   * string or a path to a PEM file (typically the self-signed certificate
   * of a default server). Certificate checks stay on; global TLS settings
   * are not touched. Not available in browsers, where the browser's own
   * trust store decides. Cannot be combined with `fetch`.
   */
  ca?: string;
  /** A custom fetch (tests, instrumentation). Defaults to `globalThis.fetch`. */
  fetch?: FetchLike;
}

/**
 * Per call: `signal` cancels the request (`AbortController`, or
 * `AbortSignal.timeout(ms)` for a time-out); the call then rejects with the
 * signal's own error (`AbortError`, `TimeoutError`), not AgentdNetworkError.
 */
export interface CallOptions {
  signal?: AbortSignal;
}

export interface AgentdClient {
  listAgents(options?: CallOptions): Promise<AgentdResult<AgentStatus[], ErrorIdOf<"/agents", "get">>>;
  getAgentById(id: number, options?: CallOptions): Promise<AgentdResult<AgentStatus, ErrorIdOf<"/agents/by-id/{agent_id}", "get">>>;
  getAgentByNumber(number: string, options?: CallOptions): Promise<AgentdResult<AgentStatus, ErrorIdOf<"/agents/by-number/{agent_number}", "get">>>;
  /** Resolves to `{ ok: true, data: undefined }` on 204. */
  pauseAgentByNumber(
    number: string,
    reason?: string,
    options?: CallOptions,
  ): Promise<AgentdResult<undefined, ErrorIdOf<"/agents/by-number/{agent_number}/pause", "post">>>;
  /** Ends the agent's pause (also 204 when it was not paused). Resolves to `{ ok: true, data: undefined }` on 204. */
  unpauseAgentByNumber(number: string, options?: CallOptions): Promise<AgentdResult<undefined, ErrorIdOf<"/agents/by-number/{agent_number}/unpause", "post">>>;
  /** The underlying typed openapi-fetch client, for direct `GET`/`POST` calls. The token is added for you. */
  raw: Client<paths>;
  /** Releases resources held by the client (the `ca` connection pool). Safe to call more than once. */
  close(): Promise<void>;
}

export function createAgentdClient(options: AgentdClientOptions): AgentdClient {
  const { baseUrl, ca, fetch: customFetch } = options;
  // As fetch sends a header value: without the whitespace around it (a token file's line break).
  const token = options.token?.trim();
  if (!baseUrl) throw new AgentdConfigError("createAgentdClient: baseUrl is required");
  const urlProblem = baseUrlProblem(baseUrl);
  if (urlProblem !== undefined) throw new AgentdConfigError(`createAgentdClient: baseUrl ${urlProblem}`);
  if (!token) throw new AgentdConfigError("createAgentdClient: token is required");
  const badToken = tokenProblem(token);
  if (badToken !== undefined) throw new AgentdConfigError(`createAgentdClient: token ${badToken}`);
  if (ca !== undefined && customFetch !== undefined) {
    throw new AgentdConfigError("createAgentdClient: `ca` and `fetch` cannot be combined");
  }

  let closeTls: (() => Promise<void>) | undefined;
  let fetchImpl: FetchLike | undefined = customFetch;
  if (ca !== undefined) {
    // Started at most once, on first use, so a client that never sends a
    // request never loads undici.
    let pending: Promise<FetchLike> | undefined;
    const getTrustingFetch = (): Promise<FetchLike> => {
      pending ??= import("./node-tls.js").then(async (m) => {
        const f = await m.createTrustingFetch(ca);
        closeTls = () => f.close();
        return f;
      });
      return pending;
    };
    fetchImpl = async (request) => (await getTrustingFetch())(request);
  }

  const raw = createClient<paths>({
    baseUrl,
    // Look the global up per call so a test or polyfill that replaces it later is honoured.
    fetch: fetchImpl ?? ((request) => globalThis.fetch(request)),
  });
  raw.use(authMiddleware(token), networkErrorMiddleware());

  return {
    raw,
    listAgents: async (options) => toResult(await raw.GET("/agents", { signal: options?.signal })),
    getAgentById: async (id, options) =>
      toResult(await raw.GET("/agents/by-id/{agent_id}", { params: { path: { agent_id: id } }, signal: options?.signal })),
    getAgentByNumber: async (number, options) =>
      toResult(
        await raw.GET("/agents/by-number/{agent_number}", {
          params: { path: { agent_number: agentNumber("getAgentByNumber", number) } },
          signal: options?.signal,
        }),
      ),
    pauseAgentByNumber: async (number, reason, options) =>
      toResult(
        await raw.POST("/agents/by-number/{agent_number}/pause", {
          params: { path: { agent_number: agentNumber("pauseAgentByNumber", number) } },
          signal: options?.signal,
          // No reason, no body: the contract makes the body optional.
          ...(reason === undefined ? {} : { body: { reason } }),
        }),
      ),
    unpauseAgentByNumber: async (number, options) =>
      toResult(
        // No body at all, as the contract prefers (and as the 17.05 Python client sends it).
        await raw.POST("/agents/by-number/{agent_number}/unpause", {
          params: { path: { agent_number: agentNumber("unpauseAgentByNumber", number) } },
          signal: options?.signal,
        }),
      ),
    close: async () => {
      const close = closeTls;
      closeTls = undefined;
      if (close) await close();
    },
  };
}

function authMiddleware(token: string): Middleware {
  return {
    onRequest({ request }) {
      request.headers.set("X-Auth-Token", token);
    },
  };
}

function networkErrorMiddleware(): Middleware {
  return {
    onError({ request, error }) {
      // Already ours (e.g. an unreadable `ca` file): keep its precise type.
      if (error instanceof AgentdError) return error;
      // The caller cancelled it (its signal): thrown as the signal's own
      // error (AbortError, TimeoutError), whatever the fetch failed with
      // meanwhile, so that a page that cancels on leaving tells it from a
      // network that failed.
      if (request.signal.aborted) {
        const reason: unknown = request.signal.reason;
        if (reason instanceof Error) return reason;
      }
      return new AgentdNetworkError(request.url, error);
    },
  };
}

/** Maps an openapi-fetch answer (`raw.GET(...)`, `raw.POST(...)`) to the result every convenience method returns. */
export function toResult<T, E extends string = ErrorId>(r: { data?: T; error?: unknown; response: Response }): AgentdResult<T, E> {
  const { status } = r.response;
  if (r.response.ok) return { ok: true, status, data: r.data as T };
  return { ok: false, status, error: asApiError<E>(r.error, status) };
}

/**
 * `number`, unless it would make the request another operation's, or none:
 * empty (`/agents/by-number//pause`, an empty form field, which agentctl
 * refuses too), or `.` or `..`, dot segments that URL parsing removes
 * (`/agents/by-number/..` is `/agents/`, the list).
 */
function agentNumber(method: string, number: string): string {
  if (number === "") throw new AgentdConfigError(`${method}: the agent number is empty`);
  if (number === "." || number === "..") throw new AgentdConfigError(`${method}: the agent number is ${JSON.stringify(number)}, a path segment URL parsing removes`);
  return number;
}

// The contract promises an Error body on every error; a proxy or a server
// that breaks the promise still yields a usable, clearly labelled error.
// An Error body is taken as the contract says it is: its identifier is one
// of the operation's (the server's answers are checked against the
// contract by the test suite, not here).
function asApiError<E extends string>(body: unknown, status: number): ApiError<E> {
  if (typeof body === "object" && body !== null && typeof (body as { error?: unknown }).error === "string") {
    return body as ApiError<E>;
  }
  return { error: `unexpected response (HTTP ${status}) without an error body` };
}
