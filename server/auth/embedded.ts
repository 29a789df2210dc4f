import { aclGranted } from "./acl.js";
import type { TokenStore } from "../store/token-store.js";
import type { TokenVerifier, Verdict } from "./verifier.js";

/**
 * Checks tokens against the database. No cache on purpose: a token revoked
 * by another process (admin CLI, another instance on the same PostgreSQL)
 * must stop working on the very next request, and the lookup is one
 * indexed query by hash.
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
    return { ok: true };
  }
}
