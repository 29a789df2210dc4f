import type { Sql } from "../db/sql.js";
import type { AgentImportSource, AgentRecord, AgentStatus, AgentStore, PauseOutcome, UnpauseOutcome } from "./agent-store.js";
import { importAgents } from "./sql-agent-import.js";
import { agentChangeParams, agentChangeStatement, type EventName, type PauseState } from "../events/outbox.js";

const COLUMNS = "id, number, extension, context, logged, paused, paused_reason, state_interface";

type AgentRow = AgentRecord;

// The largest id the contract (int32) and the column allow; anything else
// cannot exist, and must not reach PostgreSQL as an out-of-range error.
const MAX_ID = 2_147_483_647;

// The write is one statement: it only touches a logged-in agent, and row
// locking makes concurrent pauses of one agent apply one after the other.
// (A single statement that also told 404 from 409, with a CTE, cost twice
// as much on every pause; the failure path pays for its own question.)
// Pause and unpause are the same statement with another state ($2 paused,
// $3 reason); unpause applies also when the agent is not paused (the 204 is
// the same, and the row is touched all the same, so the data version moves
// as it does for a pause that changes nothing).
const CHANGE = "UPDATE agents SET paused = $2, paused_reason = $3 WHERE number = $1 AND logged RETURNING id";
const LOGGED = "SELECT logged FROM agents WHERE number = $1";
// With an event sink configured: the same update, and its event in the
// outbox in the same statement when it changed the stored state.
// It writes only when the state changes: a pause that changes nothing
// returns a null id, and the read below finds the agent logged in.
const WITH_EVENT: Record<EventName, string> = {
  agent_paused: agentChangeStatement("agent_paused"),
  agent_unpaused: agentChangeStatement("agent_unpaused"),
};

/** Where events go; absent or empty sinks: no event is recorded. */
export interface EventRecording {
  /** The outbox's sink names (server/events/sinks.ts), one row per sink and event. */
  sinks: readonly string[];
  /** Called after an event was committed, so the relay delivers it at once. */
  recorded?: () => void;
}

const VACUUM_AGENTS = "VACUUM (ANALYZE) agents";

/** The agents' data version (see migration 2): it changes whenever a write to `agents` commits. */
const DATA_VERSION = "SELECT sum(version)::text AS version FROM agents_version";

/** How the database is looked after. */
export interface Upkeep {
  /**
   * VACUUM (ANALYZE) the agents after each import: for the embedded
   * database, which runs no autovacuum. An import leaves every agent it
   * replaced as a dead row, and without a VACUUM the table and the data
   * directory grew by the fleet's size with every import, and imports
   * slowed (docs/performance.md). PostgreSQL's autovacuum does it there.
   */
  vacuumAfterImport: boolean;
}

/** AgentStore over SQL: the same statements on PGlite and PostgreSQL. */
export class SqlAgentStore implements AgentStore {
  constructor(
    private readonly sql: Sql,
    readonly originUuid: string,
    private readonly events: EventRecording = { sinks: [] },
    private readonly upkeep: Upkeep = { vacuumAfterImport: false },
  ) {}

  /**
   * One update of a logged-in agent. Without sinks: the plain statement,
   * true when it updated the agent. With sinks: the statement that also
   * records the event, true when it changed the agent (so false also for
   * an agent already in that state: the caller's read says logged in).
   */
  private async change(event: EventName, number: string, to: PauseState): Promise<boolean> {
    if (this.events.sinks.length === 0) return (await this.sql.query(CHANGE, [number, to.paused, to.reason])).length > 0;
    const [row] = await this.sql.query<{ id: number | null }>(WITH_EVENT[event], agentChangeParams(number, to, this.originUuid, this.events.sinks));
    const changed = row !== undefined && row.id !== null;
    if (changed) this.events.recorded?.();
    return changed;
  }

  // Exactly the contract's nine fields, whatever the driver adds to a row.
  private status(row: AgentRow): AgentStatus {
    return {
      id: row.id,
      origin_uuid: this.originUuid,
      number: row.number,
      extension: row.extension,
      context: row.context,
      logged: row.logged,
      paused: row.paused,
      paused_reason: row.paused_reason,
      state_interface: row.state_interface,
    };
  }

  async list(): Promise<AgentStatus[]> {
    const rows = await this.sql.query<AgentRow>(`SELECT ${COLUMNS} FROM agents ORDER BY id`);
    return rows.map((row) => this.status(row));
  }

  async getById(id: number): Promise<AgentStatus | undefined> {
    if (!Number.isInteger(id) || id < 1 || id > MAX_ID) return undefined;
    const rows = await this.sql.query<AgentRow>(`SELECT ${COLUMNS} FROM agents WHERE id = $1`, [id]);
    return rows[0] && this.status(rows[0]);
  }

  async getByNumber(number: string): Promise<AgentStatus | undefined> {
    const rows = await this.sql.query<AgentRow>(`SELECT ${COLUMNS} FROM agents WHERE number = $1`, [number]);
    return rows[0] && this.status(rows[0]);
  }

  async pause(number: string, reason: string | null): Promise<PauseOutcome> {
    const outcome = await this.applyOrExplain("agent_paused", number, { paused: true, reason });
    return outcome === "applied" ? "paused" : outcome;
  }

  async unpause(number: string): Promise<UnpauseOutcome> {
    const outcome = await this.applyOrExplain("agent_unpaused", number, { paused: false, reason: null });
    return outcome === "applied" ? "unpaused" : outcome;
  }

  /**
   * A pause or unpause: the change, and only when nothing was written, a read
   * that says why from the state as it is now. If the agent logged in
   * between the two statements, the change is tried again.
   */
  private async applyOrExplain(event: EventName, number: string, to: PauseState): Promise<"applied" | "no such agent" | "not logged in"> {
    for (let attempt = 0; ; attempt++) {
      if (await this.change(event, number, to)) return "applied";
      const rows = await this.sql.query<{ logged: boolean }>(LOGGED, [number]);
      const row = rows[0];
      if (row === undefined) return "no such agent";
      // With sinks, a logged-in agent here was already in that state: nothing to change.
      if (row.logged && this.events.sinks.length > 0) return "applied";
      if (!row.logged || attempt >= 2) return "not logged in";
    }
  }

  async upsert(agents: AgentImportSource): Promise<void> {
    await importAgents(this.sql, agents);
    // After the commit: VACUUM cannot run inside a transaction.
    if (this.upkeep.vacuumAfterImport) await this.sql.query(VACUUM_AGENTS);
  }

  /** The data version: equal on two reads only if no write to the agents committed in between. */
  async dataVersion(): Promise<string> {
    const rows = await this.sql.query<{ version: string }>(DATA_VERSION);
    const version = rows[0]?.version ?? null;
    if (version === null) throw new Error("agents_version is empty: was the database migrated?");
    return version;
  }
}
