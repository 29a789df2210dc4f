// An embedded data directory a test owns: created, migrated and holding
// exactly the agents the test names, before any agentd opens it. agentd
// seeds its demo agents only into an embedded database it creates itself
// (migration 1 applied by that very start), so a server or CLI started on
// this directory holds no agent the test did not put there.
//
//   await ownDataDir(dir, suiteAgents());
//   const agentd = await spawnAgentd({ AGENTD_DATA_DIR: dir, ... }, { cwd: dir });
import { migrate } from "../../server/db/migrations.js";
import { openPglite } from "../../server/db/pglite.js";
import type { AgentRecord } from "../../server/store/agent-store.js";
import { readOriginUuid } from "../../server/store/deployment.js";
import { SqlAgentStore } from "../../server/store/sql-agent-store.js";
import { copyPgliteTemplate } from "./pglite-template.js";

/** Creates the embedded database in `dir` (which may not exist yet), migrated, holding `agents` only. */
export async function ownDataDir(dir: string, agents: readonly AgentRecord[] = []): Promise<void> {
  await copyPgliteTemplate(dir);
  const db = await openPglite(dir);
  try {
    await migrate(db);
    if (agents.length > 0) await new SqlAgentStore(db, await readOriginUuid(db, null)).upsert(agents);
  } finally {
    await db.close();
  }
}
