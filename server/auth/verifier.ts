/** What a token check can answer. Each failure is the contract's error identifier. */
export type Verdict =
  /** `tokenId`: an embedded token's id, which the access log names (an external service gives none). */
  | { ok: true; tokenId?: string }
  | { ok: false; error: "invalid token or unauthorized" | "insufficient permissions" | "authentication server unreachable" }
  /** The verifier's cap on checks it may make was reached: ask again after this long. */
  | { ok: false; error: "too many requests"; retryAfterSeconds: number };

/**
 * Takes one check from a budget: `known` for a token the service has granted
 * something before, `unknown` for any other. Two budgets, so that made-up
 * tokens, which use up theirs, never refuse a token already checked.
 */
export type CheckBudget = (of: "known" | "unknown") => Promise<{ ok: true } | { ok: false; retryAfterSeconds: number }>;

/**
 * Checks that a token grants one concrete ACL (path values already filled in).
 * The embedded verifier reads tokens from the database; the external one asks
 * a wazo-auth compatible service.
 */
export interface TokenVerifier {
  verify(token: string, acl: string): Promise<Verdict>;
  close?(): Promise<void>;
}
