import { aclGranted } from "./acl.js";
import type { TokenStore } from "../store/token-store.js";
import type { TokenVerifier, Verdict } from "./verifier.js";

/**
 * Checks tokens against the token store it is given, on every request, and
 * keeps no cache of its own: a revoked token must stop working on the very
 * next request. The store decides what a lookup costs (stores.ts): on the
 * embedded database it is a CachedTokenStore, which every token change in
 * this process empties (the admin CLI's go through the server's admin
 * socket while it runs); on PostgreSQL, shared with the CLI and other
 * instances, every lookup is one indexed query by hash. Expiry is checked
 * here, never cached.
 */
export class EmbeddedVerifier implements TokenVerifier {
  constructor(
    private readonly tokens: TokenStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async verify(token: string, acl: string): Promise<Verdict> {
    if (token === "") return { ok: false, error: "invalid token or unauthorized" };
    const record = await this.tokens.find(token);
    if (record === undefined) return { ok: false, error: "invalid token or unauthorized" };
    if (record.expiresAt !== null && record.expiresAt.getTime() <= this.now().getTime()) {
      return { ok: false, error: "invalid token or unauthorized" };
    }
    if (!aclGranted(record.acls, acl)) return { ok: false, error: "insufficient permissions" };
    return { ok: true, tokenId: record.id };
  }
}
