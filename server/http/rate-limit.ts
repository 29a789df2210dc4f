import type { RequestHandler } from "express";
import { LRUCache } from "lru-cache";
import { BurstyRateLimiter, RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
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
 * Rate limits keyed by who is known to be asking: a request whose token was
 * recently found valid counts against that token's budget; any other
 * request (no token, a made-up one, one not checked yet) against the budget
 * of its client address. Keying by the token as presented would give every
 * made-up token a fresh budget, and each would cost a database lookup or a
 * check sent to the external auth service; this way one client gets at
 * most one budget of such requests, and so does the auth service from it.
 *
 * `perSecond` steady, up to `burst` at once; the burst allowance refills
 * over ten seconds. Limits are per server instance; behind a load balancer
 * each instance grants its own budget.
 */
export function rateLimits(
  { perSecond, burst, verifiedTtlMs = 60_000, verifiedMax = 10_000 }: RateLimitOptions,
  onLimited: () => void = () => undefined,
): RateLimits {
  const steady = new RateLimiterMemory({ keyPrefix: "steady", points: perSecond, duration: 1 });
  const extra = burst - perSecond;
  const limiter =
    extra > 0
      ? new BurstyRateLimiter(steady, new RateLimiterMemory({ keyPrefix: "burst", points: extra, duration: 10 }))
      : steady;
  // Only the token check adds to it, so a flood of made-up tokens cannot
  // evict anything but entries of tokens that were once valid.
  const valid = new LRUCache<string, true>({ max: verifiedMax, ttl: verifiedTtlMs });

  const middleware: RequestHandler = (req, _res, next) => {
    const token = req.get("x-auth-token");
    const key = token !== undefined && valid.has(token) ? `token:${token}` : `ip:${req.ip ?? "unknown"}`;
    limiter.consume(key).then(
      () => next(),
      (rejection: unknown) => {
        if (rejection instanceof RateLimiterRes) {
          onLimited();
          const retryAfter = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
          next(new HttpProblem(429, "too many requests", undefined, { "Retry-After": String(retryAfter) }));
        } else {
          next(rejection);
        }
      },
    );
  };
  return { middleware, verified: (token) => void valid.set(token, true) };
}
