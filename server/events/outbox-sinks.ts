// The outbox seen by sink: what waits for each, the events of one that
// failed, and the two things done to a sink's rows as a whole. A
// configuration change never deletes an event by itself: the rows of a
// sink no longer configured stay, are reported at start, and are
// delivered when the sink is configured again; only an operator's
// `agentd events drop` deletes them (dropSinkEvents).
import type { Logger } from "pino";
import type { Sql } from "../db/sql.js";
import { canonicalSinkName, sinkLogName } from "./sink.js";

/** What waits for one sink. */
export interface SinkBacklog {
  /** The sink's outbox name, in today's spelling (canonicalSinkName). */
  sink: string;
  /** Rows not yet delivered. */
  pending: number;
  /** When the oldest of them was recorded. */
  oldest: Date;
  /** Whether the configuration it was read with delivers to this sink. */
  configured: boolean;
}

/**
 * An event whose delivery failed at least once. It is the oldest of its
 * agent's events for that sink (an agent's later events wait behind it), so
 * it is the one to drop (`agentd events drop --event`) to give up on it.
 */
export interface FailingEvent {
  event: string;
  agent: number;
  name: string;
  recorded: Date;
  attempts: number;
  /** When it is tried again (or, on PostgreSQL, when the claim of the instance trying it now lapses); null: at the next claim. */
  nextTry: Date | null;
  /** Whether that time has come (or there is none), by the database's clock. */
  due: boolean;
  /** Why the last delivery failed; null for a failure recorded before agentd kept the reason. */
  lastError: string | null;
}

/** What waits for one sink, with the events that failed: the oldest first, at most `limit`. */
export interface SinkFailures {
  pending: number;
  /** How many failed in all: more than `events` holds when there are more than the limit. */
  failing: number;
  events: FailingEvent[];
}

const BY_STORED_NAME = "SELECT sink, count(*)::int AS pending, min(created_at) AS oldest FROM event_outbox GROUP BY sink";
const RENAME = "UPDATE event_outbox SET sink = $1 WHERE sink = ANY($2::text[])";
// $2: one event's id, or null for all of them.
const DROP =
  "WITH gone AS (DELETE FROM event_outbox WHERE sink = ANY($1::text[]) AND ($2::uuid IS NULL OR event_id = $2::uuid) RETURNING 1) SELECT count(*)::int AS dropped FROM gone";

// Every row that failed is the oldest of its agent's (the relay takes an
// agent's next only once the previous is delivered). count(*) OVER () is
// counted before the LIMIT. `due` by the database's clock, which set
// not_before. No index serves attempts: it reads the sink's rows, as
// `events list` reads the outbox's; an index for it would be one more for
// every event recorded to maintain, on the path whose cost bench:events
// measures.
const FAILING = `SELECT event_id::text AS event, agent_id AS agent, name, created_at, attempts, not_before,
    coalesce(not_before <= now(), true) AS due, last_error, count(*) OVER ()::int AS failing
  FROM event_outbox WHERE sink = ANY($1::text[]) AND attempts > 0 ORDER BY seq LIMIT $2`;

interface StoredSink {
  stored: string;
  sink: string;
  pending: number;
  oldest: Date;
}

async function storedSinks(sql: Sql): Promise<StoredSink[]> {
  const rows = await sql.query<{ sink: string; pending: number; oldest: Date | string }>(BY_STORED_NAME);
  return rows.map((row) => ({ stored: row.sink, sink: canonicalSinkName(row.sink), pending: row.pending, oldest: new Date(row.oldest) }));
}

/**
 * The backlog of every sink that has one, each sink once whatever spellings
 * its rows were stored under, in name order; `configured` against the
 * given sink names (sinkNames()).
 */
export async function sinkBacklogs(sql: Sql, configured: readonly string[]): Promise<SinkBacklog[]> {
  const bySink = new Map<string, SinkBacklog>();
  for (const row of await storedSinks(sql)) {
    const seen = bySink.get(row.sink);
    if (seen) {
      seen.pending += row.pending;
      if (row.oldest < seen.oldest) seen.oldest = row.oldest;
    } else {
      bySink.set(row.sink, { sink: row.sink, pending: row.pending, oldest: row.oldest, configured: configured.includes(row.sink) });
    }
  }
  return [...bySink.values()].sort((a, b) => (a.sink < b.sink ? -1 : a.sink > b.sink ? 1 : 0));
}

/**
 * At start, before the relay: rows an older version stored under another
 * spelling of a configured webhook's URL join that sink's queue (renamed,
 * in place: their order, by seq, is kept), and the rows of sinks not
 * configured are logged, each sink with its count, and left where they are.
 *
 * The renaming is done here rather than in a migration: the URL standard's
 * normalisation has no SQL equivalent, and a migration runs once, while
 * during a rolling upgrade on PostgreSQL instances of the older version
 * keep writing old spellings until they are replaced; each start takes in
 * what they wrote so far. Until then, those rows are delivered by the older
 * instances (their own queue) and counted as orphaned by this one.
 */
export async function reconcileOutbox(sql: Sql, configured: readonly string[], logger: Logger): Promise<void> {
  const rows = await storedSinks(sql);
  const renames = new Map<string, string[]>();
  for (const row of rows) {
    if (row.stored === row.sink || !configured.includes(row.sink)) continue;
    renames.set(row.sink, [...(renames.get(row.sink) ?? []), row.stored]);
  }
  for (const [sink, spellings] of renames) {
    await sql.query(RENAME, [sink, spellings]);
    const moved = rows.filter((row) => spellings.includes(row.stored)).reduce((sum, row) => sum + row.pending, 0);
    logger.info({ sink: sinkLogName(sink), events: moved }, "undelivered events stored under another spelling of a configured sink's URL join its queue");
  }
  const orphans = new Map<string, number>();
  for (const row of rows) if (!configured.includes(row.sink)) orphans.set(row.sink, (orphans.get(row.sink) ?? 0) + row.pending);
  for (const [sink, events] of orphans) {
    logger.warn(
      { sink: sinkLogName(sink), events },
      "undelivered events kept for a sink that is not configured: delivered when it is configured again, deleted only by `agentd events drop`",
    );
  }
}

/**
 * Deletes the undelivered rows of `sink` (any spelling it was stored under):
 * all of them, or only the event `eventId` (a UUID); returns how many. A row
 * being delivered meanwhile is not delivered again: the relay reads each
 * retry from the outbox.
 */
export async function dropSinkEvents(sql: Sql, sink: string, eventId?: string): Promise<number> {
  const { names } = await storedUnder(sql, sink);
  const [row] = await sql.query<{ dropped: number }>(DROP, [names, eventId ?? null]);
  return row?.dropped ?? 0;
}

/** The events of `sink` (any spelling it was stored under) that failed at least once, oldest first, at most `limit`, and how many wait in all. */
export async function sinkFailures(sql: Sql, sink: string, limit: number): Promise<SinkFailures> {
  const { names, pending } = await storedUnder(sql, sink);
  const rows = await sql.query<{
    event: string;
    agent: number;
    name: string;
    created_at: Date | string;
    attempts: number;
    not_before: Date | string | null;
    due: boolean;
    last_error: string | null;
    failing: number;
  }>(FAILING, [names, limit]);
  return {
    pending,
    failing: rows[0]?.failing ?? 0,
    events: rows.map((row) => ({
      event: row.event,
      agent: row.agent,
      name: row.name,
      recorded: new Date(row.created_at),
      attempts: row.attempts,
      nextTry: row.not_before === null ? null : new Date(row.not_before),
      due: row.due,
      lastError: row.last_error,
    })),
  };
}

/** The names `sink`'s rows are stored under (today's spelling first, then older ones) and how many rows they hold. */
async function storedUnder(sql: Sql, sink: string): Promise<{ names: string[]; pending: number }> {
  const target = canonicalSinkName(sink);
  const rows = (await storedSinks(sql)).filter((row) => row.sink === target);
  return { names: [target, ...rows.filter((row) => row.stored !== target).map((row) => row.stored)], pending: rows.reduce((sum, row) => sum + row.pending, 0) };
}
