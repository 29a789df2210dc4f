import type { RequestHandler } from "express";
import { BurstyRateLimiter, RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import { HttpProblem } from "./problems.js";

/**
 * Per-token rate limit: `perSecond` steady, up to `burst` at once. The burst
 * allowance refills over ten seconds. Limits are per server instance; behind
 * a load balancer each instance grants its own budget.
 */
export function rateLimiter(
  { perSecond, burst }: { perSecond: number; burst: number },
  onLimited: () => void = () => undefined,
): RequestHandler {
  const steady = new RateLimiterMemory({ keyPrefix: "steady", points: perSecond, duration: 1 });
  const extra = burst - perSecond;
  const limiter =
    extra > 0
      ? new BurstyRateLimiter(steady, new RateLimiterMemory({ keyPrefix: "burst", points: extra, duration: 10 }))
      : steady;

  return (req, _res, next) => {
    // Unauthenticated floods share one budget per client address.
    const key = req.get("x-auth-token") ?? `ip:${req.ip ?? "unknown"}`;
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
}
