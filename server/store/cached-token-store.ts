import { LRUCache } from "lru-cache";
import type { CreatedToken, TokenInfo, TokenRecord, TokenStore } from "./token-store.js";
import { hashToken } from "./sql-token-store.js";

/**
 * Remembers token lookups for a database that only this process writes (the
 * embedded PGlite database; see CachedAgentStore). Every token change goes
 * through this store and empties the cache, so a revoke takes effect on the
 * very next request. Unknown tokens are remembered too, so a made-up token
 * sent again costs no query; but in a cache of their own, so that a flood
 * of new made-up tokens (each costs its one query) cannot push the known
 * ones out. Expiry is not cached: the verifier checks `expiresAt` on every
 * request.
 */
export class CachedTokenStore implements TokenStore {
  private readonly known: LRUCache<string, TokenRecord>;
  private readonly unknown: LRUCache<string, true>;

  constructor(
    private readonly inner: TokenStore,
    /** Upper bound on each of the two caches. */
    size = 10_000,
  ) {
    this.known = new LRUCache({ max: size });
    this.unknown = new LRUCache({ max: size });
  }

  async find(token: string): Promise<TokenRecord | undefined> {
    const key = hashToken(token);
    const known = this.known.get(key);
    if (known !== undefined || this.unknown.has(key)) return known;
    const record = await this.inner.find(token);
    if (record === undefined) this.unknown.set(key, true);
    else this.known.set(key, record);
    return record;
  }

  private forget(): void {
    this.known.clear();
    this.unknown.clear();
  }

  async create(acls: readonly string[], ttlSeconds: number | null): Promise<CreatedToken> {
    try {
      return await this.inner.create(acls, ttlSeconds);
    } finally {
      this.forget();
    }
  }

  async createFirst(acls: readonly string[]): Promise<CreatedToken | null> {
    try {
      return await this.inner.createFirst(acls);
    } finally {
      this.forget();
    }
  }

  async ensure(token: string, acls: readonly string[]): Promise<{ revokedIds: string[] }> {
    try {
      return await this.inner.ensure(token, acls);
    } finally {
      this.forget();
    }
  }

  async revoke(token: string): Promise<boolean> {
    try {
      return await this.inner.revoke(token);
    } finally {
      this.forget();
    }
  }

  async revokeById(id: string): Promise<boolean> {
    try {
      return await this.inner.revokeById(id);
    } finally {
      this.forget();
    }
  }

  list(): Promise<TokenInfo[]> {
    return this.inner.list();
  }
}
