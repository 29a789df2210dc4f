import { existsSync } from "node:fs";
import path from "node:path";
import type { Logger } from "pino";
import type { Config } from "../config/config.js";
import { sinkNames } from "../events/sink.js";
import { openStores } from "../stores.js";
import { adminSocketPath, callAdminChannel } from "./channel.js";
import { DataDirBusyError, lockDataDir } from "./lock.js";
import { runAdmin } from "./run-admin.js";
import type { AdminRequest, AdminResponse } from "./protocol.js";
import { hasEmbeddedDatabase } from "../db/pgdata.js";

/** How long to wait for a server that holds the data directory but does not answer yet (it is starting). */
const STARTING_SERVER_WAIT_MS = 15_000;
/** Between two tries while waiting for it. */
const RETRY_MS = 200;

/**
 * The commands that may make a new embedded database, a first token or
 * agents: the others would find nothing to list, revoke or drop in one, and
 * are refused where there is none (run from the wrong directory, they
 * answered an empty list, as if the deployment had nothing).
 */
const MAKES_A_DATABASE: ReadonlySet<AdminRequest["op"]> = new Set(["token.create", "import", "import.replace"]);

/**
 * The commands that upgrade an older schema, as `agentd serve` does: an
 * import is what start scripts run just before it (`agentd import … &&
 * agentd serve`). The others refuse one (stores.ts).
 */
const UPGRADES_A_SCHEMA: ReadonlySet<AdminRequest["op"]> = new Set(["import", "import.replace"]);

function noDatabase(dataDir: string): AdminResponse {
  return { ok: false, error: `no embedded database in ${path.resolve(dataDir)}: run the command where the server runs, or say where its data is (AGENTD_DATA_DIR, or AGENTD_DATABASE_URL)` };
}

/**
 * Runs an admin command against the deployment's database: through the
 * running server's admin socket when one holds the embedded data directory,
 * otherwise by taking the directory's lock and opening the database here.
 * On PostgreSQL, which several processes share, always here.
 */
export async function dispatchAdmin(
  config: Config,
  logger: Logger,
  request: AdminRequest,
  /** Called when the command is about to create the embedded database, which did not exist. */
  onNewDatabase: (dataDir: string) => void = () => undefined,
): Promise<AdminResponse> {
  if (config.databaseUrl) return runHere(config, logger, request);

  const makes = MAKES_A_DATABASE.has(request.op);
  // Refused before the lock, which would make its file (and the folder).
  // Asked again under the lock below: a server may be creating it now.
  if (!makes && !hasEmbeddedDatabase(config.dataDir) && !existsSync(adminSocketPath(config.dataDir))) return noDatabase(config.dataDir);
  const socket = adminSocketPath(config.dataDir);
  // A server that is starting holds the lock but does not answer yet: wait for it.
  const deadline = Date.now() + STARTING_SERVER_WAIT_MS;
  for (;;) {
    const answer = await callAdminChannel(socket, request);
    if (answer) return answer;
    let lock;
    try {
      lock = await lockDataDir(config.dataDir);
    } catch (err) {
      if (!(err instanceof DataDirBusyError) || Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      continue;
    }
    try {
      if (!hasEmbeddedDatabase(config.dataDir)) {
        if (!makes) return noDatabase(config.dataDir);
        onNewDatabase(config.dataDir);
      }
      return await runHere(config, logger, request);
    } finally {
      await lock.release();
    }
  }
}

/** Opens the stores in this process, runs the command, closes them. */
async function runHere(config: Config, logger: Logger, request: AdminRequest): Promise<AdminResponse> {
  const stores = await openStores(config, logger, { upgradeSchema: UPGRADES_A_SCHEMA.has(request.op) });
  try {
    return await runAdmin(request, { ...stores, configuredSinks: sinkNames(config.events), authUrl: config.authUrl });
  } finally {
    await stores.db.close();
  }
}
