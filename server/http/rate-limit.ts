import type { RequestHandler } from "express";
import { LRUCache } from "lru-cache";
import { burstyLimiter } from "./bursty-limiter.js";
import { addressGroup } from "./client-address.js";
import { hashToken } from "../store/sql-token-store.js";
import { HttpProblem } from "./errors.js";

export interface RateLimitOptions {
  perSecond: number;
  burst: number;
  /** How long a token stays known as valid after a check said so. */
  verifiedTtlMs?: number;
  /** Upper bound on tokens known as valid at once. */
  verifiedMax?: number;
}

export interface RateLimits {
  /** Runs before the token is checked: counts the request against its budget, or answers 429. */
  middleware: RequestHandler;
  /** Told by the token check that a token is valid: its later requests count against its own budget. */
  verified(token: string): void;
}

/**
 * Rate limits that no other client's requests can use up:
 * - a token recently found valid has its own budget, wherever it is used from;
 * - any other token has a budget per client address (an IPv6 /64) and token,
 *   so a made-up token cannot spend the budget of a valid one that is not
 *   known yet, sent from the same address or from behind the same proxy;
 * - a request without a token has a budget per client address.
 * Made-up tokens therefore each get a budget of their own, and a client
 * that sends a new one with every request is not slowed down here. With
 * embedded tokens each new one costs one indexed lookup, remembered apart
 * from the known tokens (CachedTokenStore on the embedded database), so no
 * valid token is evicted or refused; against an external auth service the
 * verifier's own cap on uncached checks (AGENTD_AUTH_CHECK_RATE) keeps a
 * flood of them from becoming a flood of checks. Budget keys hold the
 * token's digest, never the token.
 *
 * Limits are per server instance; behind a load balancer each instance
 * grants its own budget.
 */
export function rateLimits(
  { perSecond, burst, verifiedTtlMs = 60_000, verifiedMax = 10_000 }: RateLimitOptions,
  onLimited: () => void = () => undefined,
): RateLimits {
  const limiter = burstyLimiter("requests", perSecond, burst);
  // Only the token check adds to it, so a flood of made-up tokens cannot
  // evict anything but entries of tokens that were once valid.
  const valid = new LRUCache<string, true>({ max: verifiedMax, ttl: verifiedTtlMs });

  const middleware: RequestHandler = (req, _res, next) => {
    const token = req.get("x-auth-token");
    const hashed = token ? hashToken(token) : null;
    const key =
      hashed === null
        ? `address:${addressGroup(req.ip)}`
        : valid.has(hashed)
          ? `token:${hashed}`
          : `address-token:${addressGroup(req.ip)}:${hashed}`;
    limiter.take(key).then(
      (taken) => {
        if (taken.ok) return next();
        onLimited();
        next(new HttpProblem(429, "too many requests", undefined, { "Retry-After": String(taken.retryAfterSeconds) }));
      },
      (err: unknown) => next(err),
    );
  };
  return { middleware, verified: (token) => void valid.set(hashToken(token), true) };
}
