-- Migration 3: the event outbox. One row per event and sink, written by the
-- statement that changes the agent (server/store/agent-change.ts), deleted
-- once the sink has it (server/events/relay.ts).

-- seq orders the rows: one agent's changes are serialised by its row lock,
-- so its rows' seq follow commit order. payload is the event body as text
-- (json keeps upstream's key order; jsonb would sort the keys), exactly the
-- bytes published and signed. not_before is both the claim of the relay
-- delivering the row and the time of its next retry.
CREATE TABLE event_outbox (
       seq bigserial PRIMARY KEY,
       event_id uuid NOT NULL,
       sink text NOT NULL,
       agent_id integer NOT NULL,
       name text NOT NULL CHECK (name IN ('agent_paused', 'agent_unpaused')),
       payload text NOT NULL,
       created_at timestamptz NOT NULL DEFAULT now(),
       attempts integer NOT NULL DEFAULT 0,
       not_before timestamptz
     );

-- The relay's question: the oldest row of each (sink, agent).
CREATE INDEX event_outbox_queue ON event_outbox (sink, agent_id, seq);
