import { createHash, randomBytes } from "node:crypto";
import type { Sql } from "../db/sql.js";
import type { CreatedToken, TokenInfo, TokenRecord, TokenStore } from "./token-store.js";

/** SHA-256 of a token, hex: the only form in which a token is stored. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/**
 * A new token: 32 random bytes, base64url (43 characters). Never one that starts with "-":
 * given as an argument (`agentd token revoke TOKEN`), it would be read as an option.
 */
export function newToken(random: (size: number) => Buffer = randomBytes): string {
  for (;;) {
    const token = random(32).toString("base64url");
    if (!token.startsWith("-")) return token;
  }
}

/** AGENTD_ADMIN_TOKEN holds a value a later one replaced: starting with it would bring a revoked token back. */
export class RetiredAdminTokenError extends Error {
  override readonly name = "RetiredAdminTokenError";
  constructor() {
    super("AGENTD_ADMIN_TOKEN: this value was replaced by a newer one, and its token revoked; set the current value, or a new one");
  }
}

/** Embedded tokens in the `tokens` table, looked up by hash. */
export class SqlTokenStore implements TokenStore {
  constructor(
    private readonly sql: Sql,
    /** For tests; expiry is computed from the same clock the verifier checks it with. */
    private readonly now: () => number = Date.now,
  ) {}

  async create(acls: readonly string[], ttlSeconds: number | null): Promise<CreatedToken> {
    if (ttlSeconds !== null && !(Number.isFinite(ttlSeconds) && ttlSeconds > 0)) {
      throw new RangeError(`token lifetime must be a positive number of seconds, not ${ttlSeconds}`);
    }
    const token = newToken();
    const expiresAt = ttlSeconds === null ? null : new Date(this.now() + ttlSeconds * 1000);
    // The id is the column's default (migration 6).
    const rows = await this.sql.query<{ id: string }>(
      "INSERT INTO tokens (token_hash, acls, expires_at) VALUES ($1, $2, $3) RETURNING id",
      [hashToken(token), [...acls], expiresAt],
    );
    return { token, id: rows[0]!.id };
  }

  async createFirst(acls: readonly string[]): Promise<CreatedToken | null> {
    const token = newToken();
    // One statement: the claim (migration 10) and the token are written
    // together or not at all; once claimed, it only reads.
    const rows = await this.sql.query<{ id: string }>(
      "INSERT INTO tokens (token_hash, acls, expires_at) SELECT $1, $2, NULL WHERE token_history_claim() RETURNING id",
      [hashToken(token), [...acls]],
    );
    return rows[0] === undefined ? null : { token, id: rows[0].id };
  }

  async ensure(token: string, acls: readonly string[]): Promise<{ revokedIds: string[] }> {
    const hash = hashToken(token);
    // Read first: on most starts the token is there already and nothing is
    // stale, and a read costs far less than a write.
    const [state] = await this.sql.query<{ retired: boolean; current: boolean; stale: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM retired_admin_tokens WHERE token_hash = $1) AS retired,
              coalesce(bool_or(token_hash = $1 AND acls = $2::text[] AND expires_at IS NULL AND from_variable), false) AS current,
              coalesce(bool_or(token_hash <> $1), false) AS stale
       FROM tokens WHERE token_hash = $1 OR from_variable`,
      [hash, [...acls]],
    );
    if (state?.retired) throw new RetiredAdminTokenError();
    if (state?.current && !state.stale) return { revokedIds: [] };
    return this.sql.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO tokens (token_hash, acls, expires_at, from_variable) VALUES ($1, $2, NULL, true)
         ON CONFLICT (token_hash) DO UPDATE SET acls = EXCLUDED.acls, expires_at = NULL, from_variable = true`,
        [hash, [...acls]],
      );
      // The token of the variable's previous value, revoked and remembered.
      const revoked = await tx.query<{ id: string }>(
        `WITH revoked AS (DELETE FROM tokens WHERE from_variable AND token_hash <> $1 RETURNING token_hash, id),
              retired AS (INSERT INTO retired_admin_tokens (token_hash) SELECT token_hash FROM revoked ON CONFLICT DO NOTHING)
         SELECT id FROM revoked ORDER BY id`,
        [hash],
      );
      return { revokedIds: revoked.map((row) => row.id) };
    });
  }

  async revoke(token: string): Promise<boolean> {
    const rows = await this.sql.query("DELETE FROM tokens WHERE token_hash = $1 RETURNING 1 AS gone", [
      hashToken(token),
    ]);
    return rows.length > 0;
  }

  async find(token: string): Promise<TokenRecord | undefined> {
    const rows = await this.sql.query<{ id: string; acls: string[]; expires_at: Date | null }>(
      "SELECT id, acls, expires_at FROM tokens WHERE token_hash = $1",
      [hashToken(token)],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    return { id: row.id, acls: [...row.acls], expiresAt: row.expires_at === null ? null : new Date(row.expires_at) };
  }

  async revokeById(id: string): Promise<boolean> {
    const rows = await this.sql.query("DELETE FROM tokens WHERE id = $1 RETURNING 1 AS gone", [id]);
    return rows.length > 0;
  }

  async list(): Promise<TokenInfo[]> {
    const rows = await this.sql.query<{ id: string; acls: string[]; expires_at: Date | null; created_at: Date }>(
      "SELECT id, acls, expires_at, created_at FROM tokens ORDER BY created_at, id",
    );
    return rows.map((row) => ({
      id: row.id,
      acls: [...row.acls],
      expiresAt: row.expires_at === null ? null : new Date(row.expires_at),
      createdAt: new Date(row.created_at),
    }));
  }
}
