import { LRUCache } from "lru-cache";
import type { CreatedToken, TokenInfo, TokenRecord, TokenStore } from "./token-store.js";
import { hashToken } from "./sql-token-store.js";

const UNKNOWN = Symbol("unknown token");

/**
 * Remembers token lookups for a database that only this process writes (the
 * embedded PGlite database; see CachedAgentStore). Every token change goes
 * through this store and empties the cache, so a revoke takes effect on the
 * very next request. Unknown tokens are remembered too, in a bounded cache,
 * so a flood of made-up tokens costs no query either. Expiry is not cached:
 * the verifier checks `expiresAt` on every request.
 */
export class CachedTokenStore implements TokenStore {
  private readonly cache: LRUCache<string, TokenRecord | typeof UNKNOWN>;

  constructor(
    private readonly inner: TokenStore,
    size = 10_000,
  ) {
    this.cache = new LRUCache({ max: size });
  }

  async find(token: string): Promise<TokenRecord | undefined> {
    const key = hashToken(token);
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached === UNKNOWN ? undefined : cached;
    const record = await this.inner.find(token);
    this.cache.set(key, record ?? UNKNOWN);
    return record;
  }

  async create(acls: readonly string[], ttlSeconds: number | null): Promise<CreatedToken> {
    try {
      return await this.inner.create(acls, ttlSeconds);
    } finally {
      this.cache.clear();
    }
  }

  async ensure(token: string, acls: readonly string[]): Promise<void> {
    try {
      await this.inner.ensure(token, acls);
    } finally {
      this.cache.clear();
    }
  }

  async revoke(token: string): Promise<boolean> {
    try {
      return await this.inner.revoke(token);
    } finally {
      this.cache.clear();
    }
  }

  async revokeById(id: string): Promise<boolean> {
    try {
      return await this.inner.revokeById(id);
    } finally {
      this.cache.clear();
    }
  }

  list(): Promise<TokenInfo[]> {
    return this.inner.list();
  }

  count(): Promise<number> {
    return this.inner.count();
  }
}
