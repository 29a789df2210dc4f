/** Embedded tokens. Only a SHA-256 hash of each token is stored, never the token itself. */
export interface TokenRecord {
  acls: string[];
  /** null: never expires. */
  expiresAt: Date | null;
}

export interface TokenStore {
  /** Creates a random token with these ACLs; `ttlSeconds` null means no expiry. Returns the token, which is never stored. */
  create(acls: readonly string[], ttlSeconds: number | null): Promise<string>;
  /** Makes sure this exact token exists with these ACLs and no expiry (for AGENTD_ADMIN_TOKEN). */
  ensure(token: string, acls: readonly string[]): Promise<void>;
  /** Returns whether a token was revoked. */
  revoke(token: string): Promise<boolean>;
  /** Looks a token up by its hash; undefined when unknown. Expiry is the caller's to check. */
  find(token: string): Promise<TokenRecord | undefined>;
  count(): Promise<number>;
}
