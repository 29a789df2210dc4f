import type { Sql } from "../db/sql.js";
import type { AgentRecord, AgentStatus, AgentStore, PauseOutcome } from "./agent-store.js";

const COLUMNS = "id, number, extension, context, logged, paused, paused_reason, state_interface";

type AgentRow = AgentRecord;

// The largest id the contract (int32) and the column allow; anything else
// cannot exist, and must not reach PostgreSQL as an out-of-range error.
const MAX_ID = 2_147_483_647;

// The write is one statement: it only touches a logged-in agent, and row
// locking makes concurrent pauses of one agent apply one after the other.
// (A single statement that also told 404 from 409, with a CTE, cost twice
// as much on every pause; the failure path pays for its own question.)
const PAUSE = "UPDATE agents SET paused = true, paused_reason = $2 WHERE number = $1 AND logged RETURNING id";
const LOGGED = "SELECT logged FROM agents WHERE number = $1";

const UPSERT = `
  INSERT INTO agents (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
  ON CONFLICT (id) DO UPDATE SET
    number = EXCLUDED.number, extension = EXCLUDED.extension, context = EXCLUDED.context,
    logged = EXCLUDED.logged, paused = EXCLUDED.paused, paused_reason = EXCLUDED.paused_reason,
    state_interface = EXCLUDED.state_interface`;

/** AgentStore over SQL: the same statements on PGlite and PostgreSQL. */
export class SqlAgentStore implements AgentStore {
  constructor(
    private readonly sql: Sql,
    readonly originUuid: string,
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
    for (let attempt = 0; ; attempt++) {
      const paused = await this.sql.query(PAUSE, [number, reason]);
      if (paused.length > 0) return "paused";
      // Nothing was written. Say why from the state as it is now; if the
      // agent logged in between the two statements, pause it after all.
      const rows = await this.sql.query<{ logged: boolean }>(LOGGED, [number]);
      const row = rows[0];
      if (row === undefined) return "no such agent";
      if (!row.logged || attempt >= 2) return "not logged in";
    }
  }

  async upsert(agents: readonly AgentRecord[]): Promise<void> {
    if (agents.length === 0) return;
    await this.sql.transaction(async (tx) => {
      for (const a of agents) {
        await tx.query(UPSERT, [
          a.id,
          a.number,
          a.extension,
          a.context,
          a.logged,
          a.paused,
          a.paused_reason,
          a.state_interface,
        ]);
      }
    });
  }
}
