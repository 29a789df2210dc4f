import { BurstyRateLimiter, RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";

/** What taking one unit of a budget gave: go ahead, or wait this long. */
export type Take = { ok: true } | { ok: false; retryAfterSeconds: number };

export interface BurstyLimiter {
  /** Takes one unit of `key`'s budget; never waits for one to free up. */
  take(key: string): Promise<Take>;
}

/**
 * Budgets of `perSecond` steady, up to `burst` at once, one per key, in
 * this process's memory. The burst allowance above the steady rate refills
 * over ten seconds, so a client that used it waits rather than bursting again.
 */
export function burstyLimiter(prefix: string, perSecond: number, burst: number): BurstyLimiter {
  const steady = new RateLimiterMemory({ keyPrefix: `${prefix}-steady`, points: perSecond, duration: 1 });
  const extra = burst - perSecond;
  const limiter =
    extra > 0
      ? new BurstyRateLimiter(steady, new RateLimiterMemory({ keyPrefix: `${prefix}-burst`, points: extra, duration: 10 }))
      : steady;
  return {
    take: (key) =>
      limiter.consume(key).then(
        (): Take => ({ ok: true }),
        (rejection: unknown): Take => {
          if (rejection instanceof RateLimiterRes) {
            return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)) };
          }
          throw rejection;
        },
      ),
  };
}
