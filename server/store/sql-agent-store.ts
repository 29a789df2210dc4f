import type { Sql } from "../db/sql.js";
import type { AgentImportSource, AgentRecord, ImportOptions, ImportResult, AgentStatus, AgentStore, PauseOutcome, Refusal, UnpauseOutcome } from "./agent-store.js";
import { importAgents } from "./sql-agent-import.js";
import { NO_EVENTS, writeAgentChange, type EventName, type EventRecording, type PauseState } from "./agent-change.js";

const COLUMNS = "id, number, extension, context, logged, paused, paused_reason, state_interface";

type AgentRow = AgentRecord;

// The largest id the contract (int32) and the column allow; anything else
// cannot exist, and must not reach PostgreSQL as an out-of-range error.
const MAX_ID = 2_147_483_647;

const LOGGED = "SELECT logged FROM agents WHERE number = $1";
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
    private readonly events: EventRecording = NO_EVENTS,
    private readonly upkeep: Upkeep = { vacuumAfterImport: false },
  ) {}

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
   * A pause or unpause: the change (agent-change.ts), and only when nothing
   * was written, a read that says why from the state as it is now. If the
   * agent logged in between the two statements, the change is tried again.
   * (A single statement that also told 404 from 409, with a CTE, cost more
   * on every pause; the failure path pays for its own question.)
   */
  private async applyOrExplain(event: EventName, number: string, to: PauseState): Promise<"applied" | "unchanged" | Refusal> {
    for (let attempt = 0; ; attempt++) {
      if (await writeAgentChange(this.sql, { event, number, to, originUuid: this.originUuid }, this.events)) return "applied";
      const rows = await this.sql.query<{ logged: boolean }>(LOGGED, [number]);
      const row = rows[0];
      if (row === undefined) return "no such agent";
      // With sinks, a logged-in agent here was already in that state: nothing to change.
      if (row.logged && this.events.sinks.length > 0) return "unchanged";
      if (!row.logged || attempt >= 2) return "not logged in";
    }
  }

  async upsert(agents: AgentImportSource, options?: ImportOptions): Promise<ImportResult> {
    const result = await importAgents(this.sql, agents, options);
    // After the commit: VACUUM cannot run inside a transaction.
    if (this.upkeep.vacuumAfterImport) await this.sql.query(VACUUM_AGENTS);
    return result;
  }

  /** The data version: equal on two reads only if no write to the agents committed in between. */
  async dataVersion(): Promise<string> {
    const rows = await this.sql.query<{ version: string }>(DATA_VERSION);
    const version = rows[0]?.version ?? null;
    if (version === null) throw new Error("agents_version is empty: was the database migrated?");
    return version;
  }
}
