// The write side of the transactional outbox: a pause or unpause of one
// logged-in agent, and its event, written by one SQL statement, so a 204
// means both are committed, or neither is. The relay (events/relay.ts)
// delivers the events after commit.
//
// With a sink configured, the statement calls the SQL function
// agent_change_with_event() (created by the database migrations): the
// UPDATE of one logged-in agent, and one outbox row per sink, only when the
// update changed the stored state (the paused flag or the reason): a no-op
// records nothing. With no sink configured, the plain UPDATE (no outbox
// row, no cost). `agentd import` writes the agents directly and records no
// event.
//
// Why a function rather than one CTE: plpgsql keeps its statements' plans
// for the session, where a CTE would be planned again on every pause, and
// that planning cost more than the outbox row itself on the embedded
// database (docs/performance.md).

import { randomUUID } from "node:crypto";
import type { Sql } from "../db/sql.js";

/** The events, named as upstream names them; each has its routing key on the bus. */
export const EVENT_NAMES = ["agent_paused", "agent_unpaused"] as const;
export type EventName = (typeof EVENT_NAMES)[number];

/** The state a change sets: pause (true and its reason) or unpause (false and null). */
export interface PauseState {
  paused: boolean;
  reason: string | null;
}

/** Where events go; empty sinks: no event is recorded. */
export interface EventRecording {
  /** The outbox's sink names (sinkNames() in events/sink.ts), one row per sink and event. */
  sinks: readonly string[];
  /** Called after an event was committed, so the relay delivers it at once. */
  recorded?: () => void;
}

export const NO_EVENTS: EventRecording = { sinks: [] };

/** One change to write: `to` on the agent numbered `number`, recorded as `event` from `originUuid`. */
export interface AgentChange {
  event: EventName;
  number: string;
  to: PauseState;
  originUuid: string;
}

// The write is one statement: it only touches a logged-in agent, and row
// locking makes concurrent changes of one agent apply one after the other.
// Pause and unpause are the same statement with another state ($2 paused,
// $3 reason); without sinks, unpause applies also when the agent is not
// paused (the 204 is the same, and the row is touched all the same, so the
// data version moves as it does for a pause that changes nothing).
const CHANGE = "UPDATE agents SET paused = $2, paused_reason = $3 WHERE number = $1 AND logged RETURNING id";

// With a sink: the same update, and its event in the outbox in the same
// statement, written only when the state changes.
const WITH_EVENT: Record<EventName, string> = {
  agent_paused: agentChangeStatement("agent_paused"),
  agent_unpaused: agentChangeStatement("agent_unpaused"),
};

/**
 * Writes one change of a logged-in agent. Without sinks: the plain
 * statement, true when it updated the agent. With sinks: the statement that
 * also records the event, true when it changed the agent (so false also for
 * an agent already in that state), and then `events.recorded()` is called.
 * False says nothing of why: the caller tells the cases apart with a read.
 */
export async function writeAgentChange(sql: Sql, change: AgentChange, events: EventRecording): Promise<boolean> {
  const { event, number, to, originUuid } = change;
  if (events.sinks.length === 0) return (await sql.query(CHANGE, [number, to.paused, to.reason])).length > 0;
  const [row] = await sql.query<{ id: number | null }>(WITH_EVENT[event], agentChangeParams(number, to, originUuid, events.sinks));
  const changed = row !== undefined && row.id !== null;
  if (changed) events.recorded?.();
  return changed;
}

/**
 * Sets `to` on the logged-in agent numbered $1 if that changes its stored
 * state, and then records `event` for each sink in $5. Returns one row
 * whose `id` is the agent's id when it changed, and null when the agent is
 * unknown, not logged in, or already in that state.
 *
 * Parameters: agentChangeParams().
 */
export function agentChangeStatement(event: EventName): string {
  return `SELECT agent_change_with_event($1::text, $2::boolean, $3::text, '${event}', $4::text, $5::text[], $6::uuid) AS id`;
}

/** The parameters of an agentChangeStatement(), with a new event id (unused when nothing changes). */
export function agentChangeParams(number: string, to: PauseState, originUuid: string, sinks: readonly string[]): unknown[] {
  return [number, to.paused, to.reason, originUuid, [...sinks], randomUUID()];
}
