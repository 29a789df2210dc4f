// The transactional outbox: an agent's change and its event are written by
// one SQL statement, so a 204 means both are committed, or neither is.
//
// agentChangeStatement() wraps the UPDATE of one logged-in agent in a CTE
// that also inserts one outbox row per configured sink, and only when the
// update changed the stored state (the paused flag or the reason): a no-op
// records nothing. The relay (relay.ts) delivers the rows after commit.
//
// Pause uses it as PAUSE_WITH_EVENT in store/sql-agent-store.ts; unpause
// plugs in the same way:
//
//   const UNPAUSE_WITH_EVENT = agentChangeStatement("agent_unpaused", "paused = false, paused_reason = NULL");
//   await sql.query(UNPAUSE_WITH_EVENT, eventParams(number, originUuid, sinks));
//
// and, with no sink configured, keeps its plain UPDATE (no outbox row, no cost).
// `agentd import` writes the agents directly and records no event.

/** The events, named as upstream names them; each has its routing key on the bus. */
export const EVENT_NAMES = ["agent_paused", "agent_unpaused"] as const;
export type EventName = (typeof EVENT_NAMES)[number];

/** Upstream's field, carried as it is. */
export const EVENT_REQUIRED_ACL = "events.statuses.agents";

/**
 * One statement that applies `set` to the logged-in agent numbered $1 and
 * records `event` for each sink in $3 when the state changed; returns the
 * agent's id and whether an event was recorded when it was updated (no row:
 * no such agent, or not logged in).
 *
 * Parameters: $1 agent number, $2 origin UUID, $3 sink names (text[]); `set`
 * may use $4 onwards (eventParams' `extra`).
 *
 * The `target` CTE locks the row (FOR UPDATE) and reads it as it is once
 * locked, so the comparison with the new values is exact even when
 * concurrent pauses of the agent queue on that lock.
 */
export function agentChangeStatement(event: EventName, set: string): string {
  return `
    WITH target AS (
      SELECT id, paused, paused_reason FROM agents WHERE number = $1 AND logged FOR UPDATE
    ), changed AS (
      UPDATE agents SET ${set} FROM target WHERE agents.id = target.id
      RETURNING agents.id, agents.number, agents.paused, agents.paused_reason,
        (target.paused, target.paused_reason) IS DISTINCT FROM (agents.paused, agents.paused_reason) AS differs
    ), event AS (
      -- Materialised once (gen_random_uuid is volatile): every sink's row of one event has the same id.
      SELECT gen_random_uuid() AS event_id, id,
        json_build_object(
          'name', '${event}',
          'origin_uuid', $2::text,
          'data', json_build_object(
            'agent_id', id, 'agent_number', number, 'queue', NULL,
            -- Upstream's wire: "" when there is no reason (see the contract's EventPauseReason).
            'paused', paused, 'paused_reason', coalesce(paused_reason, '')),
          'required_acl', '${EVENT_REQUIRED_ACL}')::text AS payload
      FROM changed WHERE differs
    ), recorded AS (
      INSERT INTO event_outbox (event_id, sink, agent_id, name, payload)
      SELECT event.event_id, sink, event.id, '${event}', event.payload
      FROM event CROSS JOIN unnest($3::text[]) AS sink
    )
    SELECT id, differs AS recorded FROM changed`;
}

/** The parameters of an agentChangeStatement(): the fixed three, then the ones of its `set`. */
export function eventParams(number: string, originUuid: string, sinks: readonly string[], ...extra: unknown[]): unknown[] {
  return [number, originUuid, [...sinks], ...extra];
}
