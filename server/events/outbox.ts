// The transactional outbox: an agent's change and its event are written by
// one SQL statement, so a 204 means both are committed, or neither is.
//
// The statement calls agent_change_with_event() (migrations 4 and 5 in
// db/migrations.ts): the UPDATE of one logged-in agent, and one outbox row
// per configured sink, only when the update changed the stored state (the
// paused flag or the reason): a no-op records nothing. The relay (relay.ts)
// delivers the rows after commit. With no sink configured, the stores keep
// their plain UPDATE (no outbox row, no cost). `agentd import` writes the
// agents directly and records no event.
//
// Why a function rather than one CTE: plpgsql keeps its statements' plans
// for the session, and planning the CTE on every pause cost more than the
// outbox row itself on the embedded database (docs/performance.md).

import { randomUUID } from "node:crypto";

/** The events, named as upstream names them; each has its routing key on the bus. */
export const EVENT_NAMES = ["agent_paused", "agent_unpaused"] as const;
export type EventName = (typeof EVENT_NAMES)[number];

/** The state a change sets: pause (true and its reason) or unpause (false and null). */
export interface PauseState {
  paused: boolean;
  reason: string | null;
}

/**
 * Sets `to` on the logged-in agent numbered $1 if that changes its stored
 * state, and then records `event` for each sink in $3. Returns one row
 * whose `id` is the agent's id when it changed, and null when the agent is
 * unknown, not logged in, or already in that state (the caller tells these
 * apart with a read, as pause always did).
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
