-- Migration 5: the same change and event, cheaper. The INSERT builds its
-- rows in one SELECT over the sinks, without migration 4's subquery, which
-- was most of the event's extra cost over the plain UPDATE on the embedded
-- database; and the event id comes from the caller (crypto.randomUUID()),
-- so the statement no longer pays for gen_random_uuid().

CREATE FUNCTION agent_change_with_event(
       p_number text, p_paused boolean, p_reason text, p_event text, p_origin text, p_sinks text[], p_event_id uuid
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
         SELECT p_event_id, sink, changed_id, p_event, json_build_object(
                 'name', p_event,
                 'origin_uuid', p_origin,
                 'data', json_build_object(
                   'agent_id', changed_id, 'agent_number', p_number, 'queue', NULL,
                   -- Upstream's wire: "" when there is no reason (see the contract's EventPauseReason).
                   'paused', p_paused, 'paused_reason', coalesce(p_reason, '')),
                 'required_acl', 'events.statuses.agents')::text
         FROM unnest(p_sinks) AS sink;
       RETURN changed_id;
     END $$;

-- Migration 4's six-argument form stays callable, so that instances not yet
-- upgraded keep recording events while a deployment rolls on, but as the
-- new one with an id made here: one body for the change and its event, not
-- two to keep alike.
CREATE OR REPLACE FUNCTION agent_change_with_event(
       p_number text, p_paused boolean, p_reason text, p_event text, p_origin text, p_sinks text[]
     ) RETURNS integer LANGUAGE sql AS $$
       SELECT agent_change_with_event(p_number, p_paused, p_reason, p_event, p_origin, p_sinks, gen_random_uuid())
     $$;
