-- Migration 11: a second way for the relay to claim, by agent
-- (server/events/relay.ts), so that agents held back hold back only
-- themselves, however many events they have queued.
--
-- The claim of migration 4 reads the sink's oldest rows, a window of twice
-- the batch, and takes the due ones. An agent whose oldest event waits (its
-- receiver refused it, or another instance has it) holds back its own later
-- events; with a window's worth of them queued, the window held nothing
-- else, and every other agent's events to that sink waited too, for as long
-- as the refused event was refused.
--
-- The relay still claims the oldest first, the cheapest way. When that
-- gives it nothing, or less than a batch (at most once per poll interval),
-- it claims by agent: the next agents after the last one it read
-- (event_outbox_agents, one index probe each), then their due rows
-- (event_outbox_claim_of, or event_outbox_peek_of on the embedded
-- database). An agent whose oldest row
-- is not due is passed over after reading that one row, so such a claim's
-- cost grows with the agents it reads and the rows it takes, never with how
-- many rows an agent has queued.
--
-- The index is the agents' queues, in their order; new rows add to it (one
-- more index entry per event recorded).
--
-- Claims of both ways take the same advisory lock and respect each other's
-- leases (not_before), so an instance of the previous release still running
-- on PostgreSQL during an upgrade, which claims only the oldest, claims
-- alongside. plan_cache_mode = force_custom_plan plans each call for the
-- table as it is then: a plan a plpgsql function keeps for its session
-- would otherwise be the one made for the empty outbox of the start (the
-- embedded database analyses it only at start and now and then), which
-- reads the whole table for each agent once a backlog has built up.
-- enable_sort = off reads each queue in index order, as migration 4's
-- question does; jit = off as migration 7 explains.
CREATE INDEX event_outbox_agent_queue ON event_outbox (sink, agent_id, seq);

-- The next p_count agents with rows for p_sink after agent p_after, in
-- agent order: each found with one probe of the index (a loose index scan),
-- whatever the length of their queues.
CREATE FUNCTION event_outbox_agents(p_sink text, p_after integer, p_count integer)
     RETURNS TABLE (agent_id integer) LANGUAGE plpgsql STABLE SET plan_cache_mode = force_custom_plan SET jit = off AS $$
     BEGIN
       RETURN QUERY
         WITH RECURSIVE next (agent_id, n) AS (
           SELECT (SELECT min(o.agent_id) FROM event_outbox o WHERE o.sink = p_sink AND o.agent_id > p_after), 1
           UNION ALL
           SELECT (SELECT min(o.agent_id) FROM event_outbox o WHERE o.sink = p_sink AND o.agent_id > next.agent_id), next.n + 1
           FROM next WHERE next.agent_id IS NOT NULL AND next.n < p_count
         )
         SELECT next.agent_id FROM next WHERE next.agent_id IS NOT NULL;
     END $$;

-- The rows of p_sink the relay may deliver now among those of the agents
-- p_agents, taken agent after agent in that order, at most p_limit: of each
-- agent, its oldest rows up to the first that is not due (claimed by
-- another instance, or waiting for its retry), which holds back the rest of
-- its queue, and at most p_per_agent, so that an agent with a long queue
-- shares the claim with the agents after it. An agent whose oldest row is
-- not due costs that one read.
CREATE FUNCTION event_outbox_due_of(p_sink text, p_agents integer[], p_limit integer, p_per_agent integer)
     RETURNS TABLE (seq bigint) LANGUAGE plpgsql STABLE SET enable_sort = off SET plan_cache_mode = force_custom_plan SET jit = off AS $$
     BEGIN
       RETURN QUERY
       SELECT q.seq
       FROM unnest(p_agents) AS a (agent_id)
       CROSS JOIN LATERAL (
         SELECT r.seq FROM (
           SELECT o.seq, bool_and(o.not_before IS NULL OR o.not_before <= now()) OVER (ORDER BY o.seq) AS due
           FROM (
             SELECT e.seq, e.not_before FROM event_outbox e
             WHERE e.sink = p_sink AND e.agent_id = a.agent_id
             ORDER BY e.sink, e.agent_id, e.seq LIMIT p_per_agent
           ) o
         ) r
         WHERE r.due AND NOT EXISTS (
           SELECT 1 FROM (
             SELECT h.not_before FROM event_outbox h
             WHERE h.sink = p_sink AND h.agent_id = a.agent_id
             ORDER BY h.sink, h.agent_id, h.seq LIMIT 1
           ) head WHERE head.not_before > now()
         )
       ) q
       LIMIT p_limit;
     END $$;

-- Several instances on one PostgreSQL: the due rows, leased for p_lease_ms,
-- under the advisory lock of migration 4's claim (its comment says why).
CREATE FUNCTION event_outbox_claim_of(p_sink text, p_lease_ms double precision, p_agents integer[], p_limit integer, p_per_agent integer)
     RETURNS TABLE (seq text, event_id text, agent_id integer, name text, payload text, created_at timestamptz, attempts integer)
     LANGUAGE plpgsql SET plan_cache_mode = force_custom_plan AS $$
     BEGIN
       PERFORM pg_advisory_xact_lock(1634166134);
       RETURN QUERY
         UPDATE event_outbox o SET not_before = now() + p_lease_ms * interval '1 millisecond'
         WHERE o.seq = ANY (ARRAY(SELECT due.seq FROM event_outbox_due_of(p_sink, p_agents, p_limit, p_per_agent) AS due))
         RETURNING o.seq::text, o.event_id::text, o.agent_id, o.name, o.payload, o.created_at, o.attempts;
     END $$;

-- The embedded database has one relay, whose rounds never overlap: the due
-- rows need no lease.
CREATE FUNCTION event_outbox_peek_of(p_sink text, p_agents integer[], p_limit integer, p_per_agent integer)
     RETURNS TABLE (seq text, event_id text, agent_id integer, name text, payload text, created_at timestamptz, attempts integer)
     LANGUAGE plpgsql STABLE SET plan_cache_mode = force_custom_plan AS $$
     BEGIN
       RETURN QUERY
         SELECT o.seq::text, o.event_id::text, o.agent_id, o.name, o.payload, o.created_at, o.attempts
         FROM event_outbox o
         WHERE o.seq = ANY (ARRAY(SELECT due.seq FROM event_outbox_due_of(p_sink, p_agents, p_limit, p_per_agent) AS due));
     END $$;
