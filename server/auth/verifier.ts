/** What a token check can answer. Each failure is the contract's error identifier. */
export type Verdict =
  | { ok: true }
  | { ok: false; error: "invalid token or unauthorized" | "insufficient permissions" | "authentication server unreachable" };

/**
 * Checks that a token grants one concrete ACL (path values already filled in).
 * The embedded verifier reads tokens from the database; the external one asks
 * a wazo-auth compatible service.
 */
export interface TokenVerifier {
  verify(token: string, acl: string): Promise<Verdict>;
  close?(): Promise<void>;
}
