import { createHash, randomBytes } from "node:crypto";
import type { Sql } from "../db/sql.js";
import type { TokenRecord, TokenStore } from "./token-store.js";

/** SHA-256 of a token, hex: the only form in which a token is stored. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** A new token: 32 random bytes, base64url (43 characters). */
export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

/** Embedded tokens in the `tokens` table, looked up by hash. */
export class SqlTokenStore implements TokenStore {
  constructor(
    private readonly sql: Sql,
    /** For tests; expiry is computed from the same clock the verifier checks it with. */
    private readonly now: () => number = Date.now,
  ) {}

  async create(acls: readonly string[], ttlSeconds: number | null): Promise<string> {
    if (ttlSeconds !== null && !(Number.isFinite(ttlSeconds) && ttlSeconds > 0)) {
      throw new RangeError(`token lifetime must be a positive number of seconds, not ${ttlSeconds}`);
    }
    const token = newToken();
    const expiresAt = ttlSeconds === null ? null : new Date(this.now() + ttlSeconds * 1000);
    await this.sql.query("INSERT INTO tokens (token_hash, acls, expires_at) VALUES ($1, $2, $3)", [
      hashToken(token),
      [...acls],
      expiresAt,
    ]);
    return token;
  }

  async ensure(token: string, acls: readonly string[]): Promise<void> {
    await this.sql.query(
      `INSERT INTO tokens (token_hash, acls, expires_at) VALUES ($1, $2, NULL)
       ON CONFLICT (token_hash) DO UPDATE SET acls = EXCLUDED.acls, expires_at = NULL`,
      [hashToken(token), [...acls]],
    );
  }

  async revoke(token: string): Promise<boolean> {
    const rows = await this.sql.query("DELETE FROM tokens WHERE token_hash = $1 RETURNING 1 AS gone", [
      hashToken(token),
    ]);
    return rows.length > 0;
  }

  async find(token: string): Promise<TokenRecord | undefined> {
    const rows = await this.sql.query<{ acls: string[]; expires_at: Date | null }>(
      "SELECT acls, expires_at FROM tokens WHERE token_hash = $1",
      [hashToken(token)],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    return { acls: [...row.acls], expiresAt: row.expires_at === null ? null : new Date(row.expires_at) };
  }

  async count(): Promise<number> {
    const rows = await this.sql.query<{ n: number }>("SELECT count(*)::integer AS n FROM tokens");
    return rows[0]?.n ?? 0;
  }
}
