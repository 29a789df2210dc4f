import type { Logger } from "pino";
import type { TokenStore } from "./store/token-store.js";
import type { Config } from "./config/config.js";
import type { Database } from "./db/sql.js";
import type { PgliteThread } from "./db/threaded-pglite.js";
import { migrate, SchemaBehindError } from "./db/migrations.js";
import { describeFailure, PathFailure } from "./failure.js";
import { shownUrl } from "./shown-url.js";
import { instrumentedDatabase } from "./db/instrumented.js";
import { NO_METRICS, type Metrics } from "./ops/metrics.js";
import type { AgentStore } from "./store/agent-store.js";
import { NO_EVENTS, type EventRecording } from "./store/agent-change.js";
import { SqlAgentStore } from "./store/sql-agent-store.js";
import { readOriginUuid } from "./store/deployment.js";
import { seedDemoAgents } from "./store/seed.js";
import { SqlTokenStore } from "./store/sql-token-store.js";
import { CachedAgentStore } from "./store/cached-agent-store.js";
import { CachedTokenStore } from "./store/cached-token-store.js";
import { VersionedListStore } from "./store/versioned-list-store.js";

/** The database, opened and migrated, and the stores over it. */
export interface Stores {
  db: Database;
  store: AgentStore;
  tokens: TokenStore;
}

export interface StoresOptions {
  metrics?: Metrics;
  /** Where pauses record their events (the server's relay); none: no event is recorded (the CLI). */
  events?: EventRecording;
  /** The embedded database's thread, when the caller started it early (see serve); else one is started here. */
  pgliteThread?: PgliteThread;
  /**
   * Whether an existing database's older schema is upgraded (serve, and
   * import, which start scripts run before it; both log it) or refused (the
   * other admin commands: a token listed on a host with the new release
   * would upgrade a shared PostgreSQL under the previous release's
   * instances, and they could not start again).
   */
  upgradeSchema?: boolean;
}

/**
 * Opens the configured database (PGlite in the data directory, or PostgreSQL
 * when AGENTD_DATABASE_URL is set), makes a new one's schema or upgrades an
 * older one (`upgradeSchema`), and seeds
 * demo agents into a brand-new embedded database. The caller must already
 * hold the data-directory lock for the embedded database.
 */
export async function openStores(config: Config, logger: Logger, options: StoresOptions = {}): Promise<Stores> {
  const { metrics = NO_METRICS, events = NO_EVENTS, upgradeSchema = false } = options;
  // Only the configured driver is loaded: each takes time to load, which
  // every admin command would otherwise pay for the other one.
  const postgres = config.databaseUrl;
  const opened = postgres
    ? await (await import("./db/postgres.js")).openPostgres(postgres, { timeoutMs: config.dbTimeoutMs }).catch((err: unknown) => {
        throw onPostgres("connect to", postgres, err, config.dbTimeoutMs);
      })
    : await (options.pgliteThread ?? (await import("./db/threaded-pglite.js")).startPgliteThread(undefined, { stallTimeoutMs: config.dbStallTimeoutMs })).open(config.dataDir);
  const db = metrics === NO_METRICS ? opened : instrumentedDatabase(opened, metrics);
  try {
    const applied = await migrate(db, undefined, { upgrade: upgradeSchema }).catch((err: unknown) => {
      // A refusal is not a failure to migrate: said as it is.
      throw postgres && !(err instanceof SchemaBehindError) ? onPostgres("migrate", postgres, err, config.dbTimeoutMs) : err;
    });
    // An upgrade's schema change is worth a warning (an admin command's
    // logger shows no less): a rollback would need it undone. A new
    // database's schema is no news.
    if (applied.length > 0) {
      const message = `database schema migrated to version ${applied.at(-1)}`;
      if (applied.includes(1)) logger.info({ migrations: applied }, message);
      else logger.warn({ migrations: applied }, message);
    }
    const originUuid = await readOriginUuid(db, config.originUuid);
    const store = new SqlAgentStore(db, originUuid, events, { vacuumAfterImport: db.kind === "pglite" });
    // Version 1 was applied just now: the database did not exist before.
    if (db.kind === "pglite" && applied.includes(1)) {
      await seedDemoAgents(store);
      logger.info("new embedded database: seeded demo agents");
    }
    const tokens = new SqlTokenStore(db);
    // The embedded database has exactly one user, this process, so reads can
    // be served from memory without ever going stale. PostgreSQL is shared
    // by several instances and the CLI: every read asks it, and the list is
    // reused only while the data version says nothing changed.
    return db.kind === "pglite"
      ? { db, store: new CachedAgentStore(store), tokens: new CachedTokenStore(tokens) }
      : { db, store: new VersionedListStore(store), tokens };
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
}

/**
 * A failure on PostgreSQL at start, saying which step and which variable:
 * `cannot migrate the database postgres://agentd@db/agentd
 * (AGENTD_DATABASE_URL): permission denied for schema public`, the URL
 * without its secrets (shownUrl).
 */
function onPostgres(step: string, url: string, err: unknown, timeoutMs: number): PathFailure {
  // A time-out may be the setting's as much as the database's: name it too.
  const within = /time(d )?out/i.test(describeFailure(err)) ? ` within ${timeoutMs} ms (AGENTD_DB_TIMEOUT)` : "";
  return new PathFailure(step, `the database ${shownUrl(url)} (AGENTD_DATABASE_URL)${within}`, err);
}
