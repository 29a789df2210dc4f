import { LRUCache } from "lru-cache";
import { Agent, request } from "undici";
import type { CheckBudget, TokenVerifier, Verdict } from "./verifier.js";

/** The one HTTP call the verifier makes; global `fetch` fits, tests may pass their own. */
export type AuthFetch = (url: string, init: { method: "HEAD"; signal: AbortSignal }) => Promise<{ status: number }>;

/** Where the verifier reports why the auth service could not answer. Never receives a token. */
export interface AuthLogger {
  warn(details: object, message: string): void;
}

export interface ExternalVerifierOptions {
  /** Base URL of the wazo-auth compatible service, e.g. `https://auth.example:9497`. */
  url: string;
  timeoutMs?: number;
  /** How long a positive answer is reused; 0 disables the cache. */
  cacheTtlMs?: number;
  /** Upper bound on cached (token, acl) pairs. */
  cacheSize?: number;
  fetch?: AuthFetch;
  log?: AuthLogger;
  /** Called on each check answered from the cache (for the metrics). */
  onCacheHit?: () => void;
  /** Clock for the cache TTL (milliseconds, monotonic); tests may pass their own. */
  clock?: { now(): number };
  /**
   * Taken before every check the cache cannot answer. Made-up tokens are
   * never cached, so without it a flood of them from anywhere would become
   * as many requests to the auth service.
   */
  checkBudget?: CheckBudget;
}

/**
 * Asks a wazo-auth compatible service whether a token grants an ACL:
 * `HEAD {url}/0.1/token/{token}?scope={acl}`. Anything but a clear
 * 204/404/403 fails closed as `authentication server unreachable`.
 */
export class ExternalVerifier implements TokenVerifier {
  private readonly base: string;
  private readonly timeoutMs: number;
  private readonly fetch: AuthFetch;
  private readonly log: AuthLogger | undefined;
  private readonly onCacheHit: () => void;
  private readonly checkBudget: CheckBudget | null;
  /** Only positive answers are kept, so a failure is always asked again. */
  private readonly allowed: LRUCache<string, true> | null;
  /**
   * Tokens the service has granted an ACL (a 204): their checks come from a
   * budget of their own (CheckBudget), so a flood of made-up tokens, which
   * uses up the other, cannot refuse them once their cached answer has
   * expired, or for an ACL not asked yet. Only a grant puts a token here
   * (a token refused everything, 403, is no user of this service), and any
   * answer but a grant or a 403 takes it out.
   */
  private readonly known: LRUCache<string, true>;
  /** Set by close(): a check it abandons is not the service's failure. */
  private closed = false;
  /** Our own keep-alive pool, closed with the verifier; null when a fetch was injected. */
  private readonly agent: Agent | null;

  constructor(options: ExternalVerifierOptions) {
    this.base = options.url.replace(/\/+$/, "");
    this.timeoutMs = options.timeoutMs ?? 2000;
    this.log = options.log;
    this.onCacheHit = options.onCacheHit ?? (() => undefined);
    this.checkBudget = options.checkBudget ?? null;
    const ttl = options.cacheTtlMs ?? 10_000;
    const size = options.cacheSize ?? 10_000;
    this.known = new LRUCache<string, true>({ max: Math.max(1, size) });
    this.allowed =
      ttl > 0 && size > 0
        ? new LRUCache<string, true>({
            max: size,
            ttl,
            // Read the clock on every lookup: an expired answer must not live on for a resolution tick.
            ttlResolution: 0,
            ...(options.clock ? { perf: options.clock } : {}),
          })
        : null;
    if (options.fetch) {
      this.fetch = options.fetch;
      this.agent = null;
    } else {
      // Keep connections open between checks so a cache miss costs one
      // round trip, not a TCP (and TLS) handshake as well.
      // Bounded: each connection is a descriptor the API's connections
      // share (http/connection-limits.ts); checks beyond it queue for one.
      const agent = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 60_000, connections: 32 });
      this.agent = agent;
      this.fetch = async (url, init) => {
        // undici closes the connection after a HEAD by default, in case a
        // broken server sends a body anyway; a wazo-auth compatible service
        // does not, and reusing the connection is what keeps a cache miss cheap.
        const response = await request(url, { method: init.method, signal: init.signal, dispatcher: agent, reset: false });
        // Release the connection back to the pool; a HEAD answer has no body anyway.
        await response.body.dump();
        return { status: response.statusCode };
      };
    }
  }

  async verify(token: string, acl: string): Promise<Verdict> {
    // `.` and `..` would be dot segments of the check's path (/0.1/token/..
    // is /0.1/), which URL parsing removes, escaped or not: the service would
    // be asked about another path. No service issues such a token.
    if (token === "" || token === "." || token === "..") return { ok: false, error: "invalid token or unauthorized" };
    const key = JSON.stringify([token, acl]);
    if (this.allowed?.get(key)) {
      this.onCacheHit();
      return { ok: true };
    }

    let url: string;
    try {
      url = `${this.base}/0.1/token/${encodeURIComponent(token)}?scope=${encodeURIComponent(acl)}`;
    } catch {
      // Lone surrogates cannot be encoded: no service could know such a token.
      return { ok: false, error: "invalid token or unauthorized" };
    }

    const taken = (await this.checkBudget?.(this.known.has(token) ? "known" : "unknown")) ?? { ok: true };
    if (!taken.ok) return { ok: false, error: "too many requests", retryAfterSeconds: taken.retryAfterSeconds };

    let status: number;
    try {
      ({ status } = await this.fetch(url, { method: "HEAD", signal: AbortSignal.timeout(this.timeoutMs) }));
    } catch (error) {
      // Abandoned by close(), at a stop: the service was not found wanting.
      if (this.closed) return { ok: false, error: "authentication server unreachable" };
      // The URL holds the token: log only the service base and the cause.
      this.log?.warn({ authUrl: this.base, cause: describe(error) }, "authentication server unreachable");
      return { ok: false, error: "authentication server unreachable" };
    }

    switch (status) {
      case 204:
        this.allowed?.set(key, true);
        this.known.set(token, true);
        return { ok: true };
      case 404:
        // Revoked or expired, if it was known: its checks come from the other budget again.
        this.known.delete(token);
        return { ok: false, error: "invalid token or unauthorized" };
      case 403:
        return { ok: false, error: "insufficient permissions" };
      default:
        this.known.delete(token);
        this.log?.warn({ authUrl: this.base, status }, "authentication server gave an unexpected answer");
        return { ok: false, error: "authentication server unreachable" };
    }
  }

  /**
   * For readiness: resolves when the service gives one of its three clear
   * answers to a check of a token that cannot exist, rejects otherwise.
   */
  async probe(): Promise<void> {
    const url = `${this.base}/0.1/token/agentd-readiness-probe?scope=agentd.readiness`;
    const { status } = await this.fetch(url, { method: "HEAD", signal: AbortSignal.timeout(this.timeoutMs) });
    if (status !== 204 && status !== 403 && status !== 404) throw new Error(`answered ${status}`);
  }

  /**
   * Called once the server has stopped listening: no request is left to
   * answer, so a check still waiting on a slow service is abandoned
   * (destroy) rather than awaited (close), which would hold the stop for up to
   * AGENTD_AUTH_TIMEOUT.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.allowed?.clear();
    this.known.clear();
    await this.agent?.destroy();
  }
}

/** Name and code only: some error messages quote the request URL, which holds the token. */
function describe(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 3; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    parts.push(typeof code === "string" ? `${e.name} ${code}` : e.name);
  }
  return parts.length > 0 ? parts.join(" <- ") : typeof error;
}
