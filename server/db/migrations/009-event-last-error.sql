-- Migration 9: why an event's last delivery failed, kept with the event.
--
-- `agentd events list --sink` shows the events that failed (the head of
-- each agent's queue that a receiver refuses or cannot take), with their
-- attempts and next retry. Without the reason, an operator deciding
-- whether to drop one had to find it in the log by the event's id. The
-- relay sets it with each retry it schedules (server/events/relay.ts);
-- NULL until the first failure. A nullable column without a default is
-- added without rewriting the table.
ALTER TABLE event_outbox ADD COLUMN last_error text;

