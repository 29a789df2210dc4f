-- Migration 4: the change of an agent and its event as one function
-- (called by server/store/agent-change.ts), and the relay's claim of the
-- rows it may deliver (server/events/relay.ts). A plpgsql function keeps
-- its statements' plans for the session, where the same work sent as one
-- CTE was parsed and planned again on every pause: on the embedded database
-- that planning was most of what an event cost.

-- Sets (p_paused, p_reason) on the logged-in agent numbered p_number, only
-- if that changes its stored state, and then records the event for each
-- sink in p_sinks, all with one event id. Returns the agent's id when it
-- changed, NULL otherwise (unknown, logged out, or already in that state).
-- The "changed" test is in the UPDATE's own WHERE, so PostgreSQL re-checks
-- it on the latest row version when concurrent changes of the agent queue
-- on its row lock: exactly the changes that happen record an event, in
-- commit order.
CREATE FUNCTION agent_change_with_event(
       p_number text, p_paused boolean, p_reason text, p_event text, p_origin text, p_sinks text[]
     ) RETURNS integer LANGUAGE plpgsql AS $$
     DECLARE
       changed_id integer;
     BEGIN
       UPDATE agents SET paused = p_paused, paused_reason = p_reason
         WHERE number = p_number AND logged AND (paused, paused_reason) IS DISTINCT FROM (p_paused, p_reason)
         RETURNING id INTO changed_id;
       IF changed_id IS NULL THEN
         RETURN NULL;
       END IF;
       INSERT INTO event_outbox (event_id, sink, agent_id, name, payload)
         SELECT event.id, sink, changed_id, p_event, event.payload
         FROM (SELECT gen_random_uuid() AS id, json_build_object(
                 'name', p_event,
                 'origin_uuid', p_origin,
                 'data', json_build_object(
                   'agent_id', changed_id, 'agent_number', p_number, 'queue', NULL,
                   -- Upstream's wire: "" when there is no reason (see the contract's EventPauseReason).
                   'paused', p_paused, 'paused_reason', coalesce(p_reason, '')),
                 'required_acl', 'events.statuses.agents')::text AS payload) AS event
         CROSS JOIN unnest(p_sinks) AS sink;
       RETURN changed_id;
     END $$;

-- The relay asks for the sink's oldest rows in seq order (below).
DROP INDEX event_outbox_queue;

CREATE INDEX event_outbox_sink_seq ON event_outbox (sink, seq);

-- The rows of p_sink the relay may deliver now. From the sink's oldest
-- p_window rows, those due now whose earlier rows in the same agent's queue
-- are all due now too: a prefix of each queue, to be delivered in seq
-- order. A row claimed by another instance, or waiting for its retry, holds
-- back the rest of its agent's queue. Every earlier row of an agent is
-- inside the window (it holds the sink's oldest rows), so the question
-- never looks past it.
--
-- enable_sort is off inside it so that the window is read in index order,
-- stopping after p_window rows. On PGlite, which never runs ANALYZE by
-- itself, the planner otherwise takes a backlog of any size for a few rows,
-- reads all of them and sorts them on every claim.
CREATE FUNCTION event_outbox_due(p_sink text, p_limit integer, p_window integer)
     RETURNS TABLE (seq bigint) LANGUAGE sql STABLE SET enable_sort = off AS $$
       WITH w AS (
         SELECT o.seq, o.agent_id, o.not_before FROM event_outbox o WHERE o.sink = p_sink ORDER BY o.sink, o.seq LIMIT p_window
       ), held AS (
         SELECT w.agent_id, min(w.seq) AS first FROM w WHERE w.not_before > now() GROUP BY w.agent_id
       )
       SELECT w.seq FROM w LEFT JOIN held ON held.agent_id = w.agent_id
       WHERE (w.not_before IS NULL OR w.not_before <= now()) AND (held.first IS NULL OR w.seq < held.first)
       ORDER BY w.seq LIMIT p_limit
     $$;

-- The due rows are fetched by their keys (= ANY): joined to the function's
-- result instead, the planner may read the whole table.
--
-- Several instances on one PostgreSQL: the due rows, leased for p_lease_ms
-- so that no other instance takes them meanwhile. Claims are serialised by
-- a transaction-scoped advisory lock taken first, so each claim's UPDATE (a
-- fresh snapshot: the function is volatile) sees every earlier claim
-- committed. The lock's key, 1634166134 (0x61676576, "agev"), is an
-- arbitrary constant naming "agentd event claim" among advisory locks.
CREATE FUNCTION event_outbox_claim(p_sink text, p_lease_ms double precision, p_limit integer, p_window integer)
     RETURNS TABLE (seq text, event_id text, agent_id integer, name text, payload text, created_at timestamptz, attempts integer)
     LANGUAGE plpgsql AS $$
     BEGIN
       PERFORM pg_advisory_xact_lock(1634166134);
       RETURN QUERY
         UPDATE event_outbox o SET not_before = now() + p_lease_ms * interval '1 millisecond'
         WHERE o.seq = ANY (ARRAY(SELECT due.seq FROM event_outbox_due(p_sink, p_limit, p_window) AS due))
         RETURNING o.seq::text, o.event_id::text, o.agent_id, o.name, o.payload, o.created_at, o.attempts;
     END $$;

-- The embedded database has one relay, whose rounds never overlap: the due
-- rows need no lease, which would cost a row version each.
CREATE FUNCTION event_outbox_peek(p_sink text, p_limit integer, p_window integer)
     RETURNS TABLE (seq text, event_id text, agent_id integer, name text, payload text, created_at timestamptz, attempts integer)
     LANGUAGE sql STABLE AS $$
       SELECT o.seq::text, o.event_id::text, o.agent_id, o.name, o.payload, o.created_at, o.attempts
       FROM event_outbox o
       WHERE o.seq = ANY (ARRAY(SELECT due.seq FROM event_outbox_due(p_sink, p_limit, p_window) AS due))
     $$;
