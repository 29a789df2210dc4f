import type { Sql } from "../db/sql.js";
import { dropSinkEvents, sinkBacklogs, sinkFailures } from "../events/outbox-sinks.js";
import { canonicalSinkName, sinkDisplayName } from "../events/sink.js";
import type { TokenStore } from "../store/token-store.js";
import { InvalidImportError, type AgentRecord, type AgentStore } from "../store/agent-store.js";
import { importBatches } from "../store/agent-import-reader.js";
import type { AdminRequest, AdminResponse } from "./protocol.js";
import { aclProblem } from "../auth/acl.js";

/** The longest TTL a token may be given: longer is "never" in all but name. */
export const MAX_TTL_SECONDS = 100 * 365.25 * 24 * 3600;

/** The failing events `events list --sink` shows, oldest first: a page of them; the answer says how many there are in all. */
const FAILING_SHOWN = 100;

export interface AdminDeps {
  tokens: TokenStore;
  store: AgentStore;
  db: Sql;
  /** The outbox names of the sinks this process's configuration delivers to (sinkNames()). */
  configuredSinks: readonly string[];
  /** This process's AGENTD_AUTH_URL (null when unset): with one, the server never reads its own tokens. */
  authUrl: string | null;
}

/**
 * The admin commands themselves, over open stores. A running server runs
 * them for the CLI over its admin socket; the CLI runs them directly when no
 * server holds the data directory (dispatch.ts chooses). Either way the same
 * code touches the database.
 */
export async function runAdmin(request: AdminRequest, deps: AdminDeps): Promise<AdminResponse> {
  switch (request.op) {
    case "token.create": {
      const problems = request.acls.map(aclProblem).filter((problem) => problem !== null);
      if (request.acls.length === 0) problems.push("at least one ACL is needed");
      if (request.ttlSeconds !== null && !(Number.isSafeInteger(request.ttlSeconds) && request.ttlSeconds >= 1 && request.ttlSeconds <= MAX_TTL_SECONDS)) {
        problems.push("ttlSeconds: must be a whole number of seconds from 1 to 100 years");
      }
      if (problems.length > 0) return { ok: false, error: "invalid token settings", problems };
      const created = await deps.tokens.create(request.acls, request.ttlSeconds);
      return { ok: true, token: created.token, id: created.id, authUrl: deps.authUrl };
    }
    case "token.revoke":
      return { ok: true, revoked: await deps.tokens.revoke(request.token) };
    case "token.revoke-id":
      return { ok: true, revoked: await deps.tokens.revokeById(request.id) };
    case "token.list": {
      const tokens = await deps.tokens.list();
      return {
        ok: true,
        tokens: tokens.map((t) => ({
          id: t.id,
          acls: t.acls,
          expiresAt: t.expiresAt?.toISOString() ?? null,
          createdAt: t.createdAt.toISOString(),
        })),
      };
    }
    case "import":
    case "import.replace": {
      // The store writes each batch while the reader checks it, in one
      // transaction that an invalid file rolls back: nothing is written.
      const text = request.text;
      const replace = request.op === "import.replace";
      let imported = 0;
      async function* counted(): AsyncGenerator<AgentRecord[]> {
        for await (const batch of importBatches(text)) {
          imported += batch.length;
          yield batch;
        }
      }
      try {
        const { removed } = await deps.store.upsert(counted(), { replace });
        return replace ? { ok: true, imported, removed } : { ok: true, imported };
      } catch (error) {
        if (error instanceof InvalidImportError) return { ok: false, error: "invalid import file", problems: error.problems };
        throw error;
      }
    }
    case "events.list": {
      const backlogs = await sinkBacklogs(deps.db, deps.configuredSinks);
      return { ok: true, sinks: backlogs.map((b) => ({ sink: b.sink, pending: b.pending, oldest: b.oldest.toISOString(), configured: b.configured })) };
    }
    case "events.failing": {
      const sink = canonicalSinkName(request.sink);
      const failures = await sinkFailures(deps.db, sink, FAILING_SHOWN);
      return {
        ok: true,
        failures: {
          sink,
          pending: failures.pending,
          failing: failures.failing,
          events: failures.events.map((e) => ({ ...e, recorded: e.recorded.toISOString(), nextTry: e.nextTry?.toISOString() ?? null })),
        },
      };
    }
    case "events.drop": {
      // A configured sink's events are on their way: dropping them is
      // refused unless asked for by name (--force), so that a typo in the
      // URL of a receiver that is merely down loses nothing.
      const sink = canonicalSinkName(request.sink);
      if (deps.configuredSinks.includes(sink) && !request.force) {
        return { ok: false, error: `${sinkDisplayName(sink)} is a configured sink: its events are being delivered (remove it from the configuration first, or pass --force)` };
      }
      return { ok: true, dropped: await dropSinkEvents(deps.db, sink) };
    }
    case "events.drop-event":
      // One event named by its id is a deliberate choice (the one a receiver
      // refuses for good, holding back its agent's next ones): configured
      // sink or not, no --force.
      return { ok: true, dropped: await dropSinkEvents(deps.db, canonicalSinkName(request.sink), request.event) };
    default:
      // A newer CLI asking a server that does not know the command yet.
      return { ok: false, error: `this agentd does not know the admin command ${JSON.stringify((request as { op: unknown }).op)}; upgrade it` };
  }
}
