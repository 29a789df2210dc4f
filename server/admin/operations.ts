import type { TokenStore } from "../store/token-store.js";
import type { AgentStore } from "../store/agent-store.js";
import { parseAgentImport } from "./import-file.js";
import type { AdminRequest, AdminResponse } from "./protocol.js";

/**
 * The admin commands themselves. A running server runs them for the CLI over
 * its admin socket; the CLI runs them directly when no server holds the data
 * directory. Either way the same code touches the database.
 */
export async function runAdmin(request: AdminRequest, deps: { tokens: TokenStore; store: AgentStore }): Promise<AdminResponse> {
  switch (request.op) {
    case "token.create":
      return { ok: true, token: await deps.tokens.create(request.acls, request.ttlSeconds) };
    case "token.revoke":
      return { ok: true, revoked: await deps.tokens.revoke(request.token) };
    case "import": {
      const parsed = await parseAgentImport(request.text);
      if (!parsed.ok) return { ok: false, error: "invalid import file", problems: parsed.problems };
      await deps.store.upsert(parsed.agents);
      return { ok: true, imported: parsed.agents.length };
    }
  }
}
