// Versioned schema migrations, run at start-up by every instance.
//
// MIGRATIONS is append-only: never edit a released entry, add a new one.
// Each entry is a list of single statements (PGlite's query() takes one
// statement at a time) and runs, with its `schema_migrations` row, in the
// one transaction of migrate(). On PostgreSQL several instances may start at
// once: a transaction-scoped advisory lock taken before anything else makes
// them run one after the other, and the later ones find nothing to do.
import type { Sql } from "./sql.js";

/** Arbitrary constant naming "agentd schema migration" among advisory locks. */
const MIGRATION_LOCK_KEY = 0x61_67_65_6e; // "agen"

/** Arbitrary constant naming "agentd event claim" among advisory locks (migration 4). */
const CLAIM_LOCK_KEY = 0x61_67_65_76; // "agev"

/** How many counters make up the agents' data version (migration 2); part of the schema, never change it. */
const VERSION_SHARDS = 16;

export const MIGRATIONS: readonly (readonly string[])[] = [
  // 1: deployment identity, agents, embedded tokens.
  [
    // Exactly one row, created with the database: every instance on one
    // PostgreSQL reports the same origin_uuid.
    `CREATE TABLE deployment (
       singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
       origin_uuid uuid NOT NULL DEFAULT gen_random_uuid(),
       created_at timestamptz NOT NULL DEFAULT now()
     )`,
    `INSERT INTO deployment DEFAULT VALUES`,
    // The CHECKs mirror the contract's AgentStatus so no path can store an
    // agent the API could not return.
    `CREATE TABLE agents (
       id integer PRIMARY KEY CHECK (id >= 1),
       number text NOT NULL CHECK (number ~ '^[0-9]+$' AND length(number) <= 40),
       extension text CHECK (length(extension) BETWEEN 1 AND 40),
       context text CHECK (length(context) BETWEEN 1 AND 80),
       logged boolean NOT NULL DEFAULT false,
       paused boolean NOT NULL DEFAULT false,
       paused_reason text CHECK (length(paused_reason) BETWEEN 1 AND 80),
       state_interface text CHECK (state_interface ~ '^[A-Za-z][A-Za-z0-9_]*/[^\\s]+$' AND length(state_interface) <= 128),
       -- Deferred so one import can swap two agents' numbers.
       CONSTRAINT agents_number_key UNIQUE (number) DEFERRABLE INITIALLY DEFERRED,
       CONSTRAINT agents_paused_implies_logged CHECK (logged OR NOT paused),
       CONSTRAINT agents_reason_implies_paused CHECK (paused OR paused_reason IS NULL),
       CONSTRAINT agents_logged_out_has_no_line
         CHECK (logged OR (extension IS NULL AND context IS NULL AND state_interface IS NULL))
     )`,
    // Only the SHA-256 (hex) of a token is stored, never the token.
    `CREATE TABLE tokens (
       token_hash text PRIMARY KEY CHECK (token_hash ~ '^[0-9a-f]{64}$'),
       acls text[] NOT NULL,
       expires_at timestamptz,
       created_at timestamptz NOT NULL DEFAULT now()
     )`,
  ],
  // 2: a data version, so an instance can tell in one tiny query whether
  // the agents changed since it last read them (GET /agents on PostgreSQL).
  [
    // The version is the sum of VERSION_SHARDS counters. A single counter
    // row would be locked by every write until its commit, serialising all
    // pauses of a deployment behind one row; with shards, pauses of
    // different agents mostly touch different rows. Every counter only
    // grows, so the sum changes exactly when a write committed.
    `CREATE TABLE agents_version (
       shard smallint PRIMARY KEY CHECK (shard >= 0 AND shard < ${VERSION_SHARDS}),
       version bigint NOT NULL DEFAULT 0
     )`,
    `INSERT INTO agents_version (shard) SELECT generate_series(0, ${VERSION_SHARDS - 1})`,
    // Bumped by triggers, in the writing transaction itself, so no write
    // path (pause, import, a future unpause, or SQL typed by an operator)
    // can forget it, and a reader never sees new rows under an old version.
    // Statement-level: one bump per statement, whatever its row count; a
    // statement that changed no row bumps nothing.
    `CREATE FUNCTION agents_bump_version() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       UPDATE agents_version SET version = version + 1
         WHERE shard IN (SELECT DISTINCT changed.id % ${VERSION_SHARDS} FROM changed);
       RETURN NULL;
     END $$`,
    `CREATE FUNCTION agents_bump_version_all() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       UPDATE agents_version SET version = version + 1;
       RETURN NULL;
     END $$`,
    // Transition tables allow one event per trigger, hence three.
    `CREATE TRIGGER agents_version_insert AFTER INSERT ON agents
       REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION agents_bump_version()`,
    `CREATE TRIGGER agents_version_update AFTER UPDATE ON agents
       REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION agents_bump_version()`,
    `CREATE TRIGGER agents_version_delete AFTER DELETE ON agents
       REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION agents_bump_version()`,
    `CREATE TRIGGER agents_version_truncate AFTER TRUNCATE ON agents
       FOR EACH STATEMENT EXECUTE FUNCTION agents_bump_version_all()`,
  ],
  // 3: the event outbox (server/events/outbox.ts). One row per event and
  // sink, written by the statement that changes the agent, deleted once the
  // sink has it.
  [
    // seq orders the rows: one agent's changes are serialised by its row
    // lock, so its rows' seq follow commit order. payload is the event body
    // as text (json keeps upstream's key order; jsonb would sort the keys),
    // exactly the bytes published and signed. not_before is both the claim
    // of the relay delivering the row and the time of its next retry.
    `CREATE TABLE event_outbox (
       seq bigserial PRIMARY KEY,
       event_id uuid NOT NULL,
       sink text NOT NULL,
       agent_id integer NOT NULL,
       name text NOT NULL CHECK (name IN ('agent_paused', 'agent_unpaused')),
       payload text NOT NULL,
       created_at timestamptz NOT NULL DEFAULT now(),
       attempts integer NOT NULL DEFAULT 0,
       not_before timestamptz
     )`,
    // The relay's question: the oldest row of each (sink, agent).
    `CREATE INDEX event_outbox_queue ON event_outbox (sink, agent_id, seq)`,
  ],
  // 4: the change of an agent and its event as one function
  // (server/events/outbox.ts). A plpgsql function keeps its statements'
  // plans for the session, where the same work sent as one CTE was parsed
  // and planned again on every pause: on the embedded database that
  // planning was most of what an event cost.
  [
    // Sets (p_paused, p_reason) on the logged-in agent numbered p_number,
    // only if that changes its stored state, and then records the event for
    // each sink in p_sinks, all with one event id. Returns the agent's id
    // when it changed, NULL otherwise (unknown, logged out, or already in
    // that state). The "changed" test is in the UPDATE's own WHERE, so
    // PostgreSQL re-checks it on the latest row version when concurrent
    // changes of the agent queue on its row lock: exactly the changes that
    // happen record an event, in commit order.
    `CREATE FUNCTION agent_change_with_event(
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
     END $$`,
    // The relay asks for the sink's oldest rows in seq order (below).
    `DROP INDEX event_outbox_queue`,
    `CREATE INDEX event_outbox_sink_seq ON event_outbox (sink, seq)`,
    // The rows of p_sink the relay may deliver now (server/events/relay.ts).
    // From the sink's oldest p_window rows, those due now whose earlier rows
    // in the same agent's queue are all due now too: a prefix of each
    // queue, to be delivered in seq order. A row claimed by another
    // instance, or waiting for its retry, holds back the rest of its agent's
    // queue. Every earlier row of an agent is inside the window (it holds
    // the sink's oldest rows), so the question never looks past it.
    //
    // enable_sort is off inside it so that the window is read in index
    // order, stopping after p_window rows. On PGlite, which never runs
    // ANALYZE by itself, the planner otherwise takes a backlog of any size
    // for a few rows, reads all of them and sorts them on every claim.
    `CREATE FUNCTION event_outbox_due(p_sink text, p_limit integer, p_window integer)
     RETURNS TABLE (seq bigint) LANGUAGE sql STABLE SET enable_sort = off AS $$
       WITH w AS (
         SELECT o.seq, o.agent_id, o.not_before FROM event_outbox o WHERE o.sink = p_sink ORDER BY o.sink, o.seq LIMIT p_window
       ), held AS (
         SELECT w.agent_id, min(w.seq) AS first FROM w WHERE w.not_before > now() GROUP BY w.agent_id
       )
       SELECT w.seq FROM w LEFT JOIN held ON held.agent_id = w.agent_id
       WHERE (w.not_before IS NULL OR w.not_before <= now()) AND (held.first IS NULL OR w.seq < held.first)
       ORDER BY w.seq LIMIT p_limit
     $$`,
    // The due rows are fetched by their keys (= ANY): joined to the
    // function's result instead, the planner may read the whole table.
    //
    // Several instances on one PostgreSQL: the due rows, leased for
    // p_lease_ms so that no other instance takes them meanwhile. Claims are
    // serialised by a transaction-scoped advisory lock taken first, so each
    // claim's UPDATE (a fresh snapshot: the function is volatile) sees every
    // earlier claim committed.
    `CREATE FUNCTION event_outbox_claim(p_sink text, p_lease_ms double precision, p_limit integer, p_window integer)
     RETURNS TABLE (seq text, event_id text, agent_id integer, name text, payload text, created_at timestamptz, attempts integer)
     LANGUAGE plpgsql AS $$
     BEGIN
       PERFORM pg_advisory_xact_lock(${CLAIM_LOCK_KEY});
       RETURN QUERY
         UPDATE event_outbox o SET not_before = now() + p_lease_ms * interval '1 millisecond'
         WHERE o.seq = ANY (ARRAY(SELECT due.seq FROM event_outbox_due(p_sink, p_limit, p_window) AS due))
         RETURNING o.seq::text, o.event_id::text, o.agent_id, o.name, o.payload, o.created_at, o.attempts;
     END $$`,
    // The embedded database has one relay, whose rounds never overlap: the
    // due rows need no lease, which would cost a row version each.
    `CREATE FUNCTION event_outbox_peek(p_sink text, p_limit integer, p_window integer)
     RETURNS TABLE (seq text, event_id text, agent_id integer, name text, payload text, created_at timestamptz, attempts integer)
     LANGUAGE sql STABLE AS $$
       SELECT o.seq::text, o.event_id::text, o.agent_id, o.name, o.payload, o.created_at, o.attempts
       FROM event_outbox o
       WHERE o.seq = ANY (ARRAY(SELECT due.seq FROM event_outbox_due(p_sink, p_limit, p_window) AS due))
     $$`,
  ],
  // 5: the same change and event, cheaper. The INSERT builds its rows in
  // one SELECT over the sinks, without migration 4's subquery, and the
  // event id comes from the caller (crypto.randomUUID()). On the embedded
  // database the event's extra cost in the pause statement fell from about
  // +50 to +23 µs over the plain UPDATE; the subquery was most of it, and
  // gen_random_uuid() about 4 µs (docs/performance.md).
  [
    `CREATE FUNCTION agent_change_with_event(
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
     END $$`,
    // Migration 4's six-argument form stays callable, so that instances not
    // yet upgraded keep recording events while a deployment rolls on, but as
    // the new one with an id made here: one body for the change and its
    // event, not two to keep alike.
    `CREATE OR REPLACE FUNCTION agent_change_with_event(
       p_number text, p_paused boolean, p_reason text, p_event text, p_origin text, p_sinks text[]
     ) RETURNS integer LANGUAGE sql AS $$
       SELECT agent_change_with_event(p_number, p_paused, p_reason, p_event, p_origin, p_sinks, gen_random_uuid())
     $$`,
  ],
];

/** Applies the migrations this database lacks; returns the versions it applied. */
export async function migrate(sql: Sql, migrations: readonly (readonly string[])[] = MIGRATIONS): Promise<number[]> {
  return sql.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_KEY]);
    await tx.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version integer PRIMARY KEY,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const rows = await tx.query<{ version: number }>("SELECT version FROM schema_migrations");
    const applied = new Set(rows.map((row) => row.version));
    const newest = Math.max(0, ...applied);
    if (newest > migrations.length) {
      throw new Error(
        `database schema version ${newest} is newer than this agentd (${migrations.length}); upgrade agentd`,
      );
    }
    const done: number[] = [];
    for (const [index, statements] of migrations.entries()) {
      const version = index + 1;
      if (applied.has(version)) continue;
      for (const statement of statements) await tx.query(statement);
      await tx.query("INSERT INTO schema_migrations (version) VALUES ($1)", [version]);
      done.push(version);
    }
    return done;
  });
}
