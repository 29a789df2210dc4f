// What the server counts. The rest of the server only sees this small
// `Metrics` interface: what happened, never how it is counted (that is
// prometheus.ts, loaded only by `agentd serve`, so that admin commands do
// not pay for loading prom-client).

export type AuthCheckResult = "allowed" | "denied" | "unknown_token" | "unavailable" | "throttled";

export interface Metrics {
  /** `operation` is a contract operationId or "unknown": never a raw path, so the label stays bounded. */
  httpRequest(operation: string, status: number | "aborted", seconds: number): void;
  dbQuery(seconds: number, failed: boolean): void;
  authCheck(result: AuthCheckResult): void;
  authCacheHit(): void;
  rateLimited(): void;
}

/** For a server whose operator listener is off: nothing is counted. */
export const NO_METRICS: Metrics = {
  httpRequest: () => undefined,
  dbQuery: () => undefined,
  authCheck: () => undefined,
  authCacheHit: () => undefined,
  rateLimited: () => undefined,
};
