import type { components } from "../../generated/openapi.js";

export type AgentStatus = components["schemas"]["AgentStatus"];
/** An agent as stored and imported: the status without the deployment's origin_uuid. */
export type AgentRecord = Omit<AgentStatus, "origin_uuid">;

/**
 * Agents to import: all at once, or in batches as a reader checks them
 * (agent-import-reader.ts). A source that throws cancels the whole import.
 * A reader hands over each batch before it has checked it, so that the
 * database stores it meanwhile: until the source ends, a store must expect
 * any JSON value in a field (and extra fields), and may find the database
 * refusing one; the source's own failure then explains it.
 */
export type AgentImportSource = readonly AgentRecord[] | AsyncIterable<readonly AgentRecord[]>;

/**
 * An import file that is not valid: every problem, with its position in the
 * file. The reader finds most; the store those that only the stored agents
 * show (a number another agent keeps).
 */
export class InvalidImportError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid import file: ${problems.length} problem(s)`);
  }
}

/**
 * What a pause or unpause did. "unchanged": the agent was already in that
 * state and nothing was written (with event sinks, where a change that
 * changes nothing records no event); the API answers it as it answers a
 * change. A store tells it apart so that a cache never applies a state
 * that a later change may already have replaced.
 */
export type PauseOutcome = "paused" | "unchanged" | "no such agent" | "not logged in";
export type UnpauseOutcome = "unpaused" | "unchanged" | "no such agent" | "not logged in";
/** A pause or unpause the store refused. */
export type Refusal = "no such agent" | "not logged in";

/** Where agent state lives. One implementation over `Sql`, for PGlite and PostgreSQL alike. */
export interface AgentStore {
  /** The deployment's UUID, reported as `origin_uuid` on every agent. */
  readonly originUuid: string;
  list(): Promise<AgentStatus[]>;
  getById(id: number): Promise<AgentStatus | undefined>;
  getByNumber(number: string): Promise<AgentStatus | undefined>;
  /** Pauses a logged-in agent in one atomic statement; `reason` null clears any previous reason. */
  pause(number: string, reason: string | null): Promise<PauseOutcome>;
  /** Ends the pause of a logged-in agent (paused false, reason null) in one atomic statement; a no-op when not paused. */
  unpause(number: string): Promise<UnpauseOutcome>;
  /** Inserts or replaces agents by id, all in one transaction, which a source that throws rolls back. */
  upsert(agents: AgentImportSource, options?: ImportOptions): Promise<ImportResult>;
}

export interface ImportOptions {
  /** The source is the whole fleet: the agents it does not name are removed, in the same transaction. */
  replace?: boolean;
}

export interface ImportResult {
  /** How many stored agents the import removed (only with `replace`). */
  removed: number;
}

/** What the API's handlers do with agents (http/agent-routes.ts). */
export type AgentOperations = Pick<AgentStore, "list" | "getById" | "getByNumber" | "pause" | "unpause">;
