-- Migration 9: the relay's question (event_outbox_due) looks past the rows
-- of agents that wait, however many they are.
--
-- Until now it read a window of the sink's oldest rows (p_window) and took
-- the due ones among them. An agent whose event a receiver refuses waits
-- for its retry, and its later events wait behind it (order per agent):
-- once that agent had a window's worth of rows queued, the window held
-- nothing else, and the sink's other agents waited too, for as long as the
-- refusal lasted. Now the agents that wait are found first, from the rows
-- that are not due (an index of the rows with a not_before: few of them,
-- the claimed and the held), and the oldest rows of every other agent, and
-- each waiting agent's rows before its first held one, are read in seq
-- order, stopping at p_limit.
--
-- The signature stays as it was, p_window included (no longer read), so
-- that event_outbox_claim and event_outbox_peek, and the instances of a
-- rolling upgrade that still call them, go on unchanged.
CREATE INDEX event_outbox_sink_not_before ON event_outbox (sink, not_before) WHERE not_before IS NOT NULL;

CREATE OR REPLACE FUNCTION event_outbox_due(p_sink text, p_limit integer, p_window integer)
     RETURNS TABLE (seq bigint) LANGUAGE sql STABLE SET enable_sort = off SET jit = off AS $$
       WITH held AS MATERIALIZED (
         SELECT h.agent_id, min(h.seq) AS first FROM event_outbox h
         WHERE h.sink = p_sink AND h.not_before IS NOT NULL AND h.not_before > now()
         GROUP BY h.agent_id
       )
       SELECT o.seq FROM event_outbox o LEFT JOIN held ON held.agent_id = o.agent_id
       WHERE o.sink = p_sink AND (o.not_before IS NULL OR o.not_before <= now()) AND (held.first IS NULL OR o.seq < held.first)
       ORDER BY o.sink, o.seq LIMIT p_limit
     $$;
