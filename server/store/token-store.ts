/** Embedded tokens. Only a SHA-256 hash of each token is stored, never the token itself. */
export interface TokenRecord {
  /** The token's short random id (see TokenInfo): what the access log names. */
  id: string;
  acls: string[];
  /** null: never expires. */
  expiresAt: Date | null;
}

/** What may be shown of a token: its short random id, never the secret or its hash. */
export interface TokenInfo extends TokenRecord {
  createdAt: Date;
}

/** A token just created: the secret, shown once and never stored, and its id. */
export interface CreatedToken {
  token: string;
  id: string;
}

export interface TokenStore {
  /** Creates a random token with these ACLs; `ttlSeconds` null means no expiry. */
  create(acls: readonly string[], ttlSeconds: number | null): Promise<CreatedToken>;
  /**
   * AGENTD_ADMIN_TOKEN: makes sure this exact token exists with these ACLs
   * and no expiry, and revokes the token an earlier value of the variable
   * made, if any, returning its id. Throws when this value is one a later
   * value replaced.
   */
  ensure(token: string, acls: readonly string[]): Promise<{ revokedIds: string[] }>;
  /**
   * Creates a token with these ACLs and no expiry only if this deployment
   * never had a token (revoked ones count: migration 10); null otherwise.
   * Several instances starting at once make at most one.
   */
  createFirst(acls: readonly string[]): Promise<CreatedToken | null>;
  /** Returns whether a token was revoked. */
  revoke(token: string): Promise<boolean>;
  /** Revokes the token with this id; returns whether there was one. */
  revokeById(id: string): Promise<boolean>;
  /** Looks a token up by its hash; undefined when unknown. Expiry is the caller's to check. */
  find(token: string): Promise<TokenRecord | undefined>;
  /** Every token, oldest first, expired ones included. */
  list(): Promise<TokenInfo[]>;
}
