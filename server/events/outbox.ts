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
//   const UNPAUSE_WITH_EVENT = agentChangeStatement("agent_unpaused", { paused: "false", reason: "NULL" });
//   const changed = await sql.query(UNPAUSE_WITH_EVENT, eventParams(number, originUuid, sinks));
//   // no row: read `logged` (as pause does) to answer 404, 409, or 204 for an agent already unpaused.
//
// and, with no sink configured, keeps its plain UPDATE (no outbox row, no cost).
// `agentd import` writes the agents directly and records no event.

/** The events, named as upstream names them; each has its routing key on the bus. */
export const EVENT_NAMES = ["agent_paused", "agent_unpaused"] as const;
export type EventName = (typeof EVENT_NAMES)[number];

/** Upstream's field, carried as it is. */
export const EVENT_REQUIRED_ACL = "events.statuses.agents";

/**
 * The state a change sets: SQL expressions for the new `paused` and
 * `paused_reason` (pause: `true` and `$4::text`; unpause: `false` and `NULL`).
 */
export interface PauseState {
  paused: string;
  reason: string;
}

/**
 * One statement that sets `to` on the logged-in agent numbered $1, only if
 * that changes its stored state, and then records `event` for each sink in
 * $3. Returns the agent's id when it changed; no row when the agent is
 * unknown, not logged in, or already in that state (the caller tells these
 * apart with a read, as pause always did).
 *
 * Parameters: $1 agent number, $2 origin UUID, $3 sink names (text[]); `to`
 * may use $4 onwards (eventParams' `extra`).
 *
 * The "changed" test is in the UPDATE's own WHERE, so PostgreSQL re-checks
 * it on the latest row version when concurrent changes of the agent queue
 * on its row lock: exactly the changes that happen record an event. (A
 * no-op writes nothing at all.)
 */
export function agentChangeStatement(event: EventName, to: PauseState): string {
  return `
    WITH changed AS (
      UPDATE agents SET paused = ${to.paused}, paused_reason = ${to.reason}
      WHERE number = $1 AND logged AND (paused, paused_reason) IS DISTINCT FROM (${to.paused}, ${to.reason})
      RETURNING id, number, paused, paused_reason
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
      FROM changed
    ), recorded AS (
      INSERT INTO event_outbox (event_id, sink, agent_id, name, payload)
      SELECT event.event_id, sink, event.id, '${event}', event.payload
      FROM event CROSS JOIN unnest($3::text[]) AS sink
    )
    SELECT id FROM changed`;
}

/** The parameters of an agentChangeStatement(): the fixed three, then the ones of its `set`. */
export function eventParams(number: string, originUuid: string, sinks: readonly string[], ...extra: unknown[]): unknown[] {
  return [number, originUuid, [...sinks], ...extra];
}
