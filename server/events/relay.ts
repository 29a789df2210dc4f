// Delivers the outbox (outbox.ts) after commit: claims rows, hands them to
// their sink, deletes what was delivered, and schedules a retry of what was
// not, with exponential backoff between retryMinMs and retryMaxMs.
//
// Order per agent: only the oldest row of each (sink, agent) is ever
// claimed, and a row stays in the outbox until its sink has it, so an
// agent's next event waits for the previous one on that sink.
//
// Several instances on one PostgreSQL: a claim is one short transaction
// (an advisory lock, then one UPDATE) that sets not_before to now + lease,
// so no other instance takes the rows while this one delivers, without
// holding a transaction open across the network (PGlite serialises
// transactions: one held open would stall the API). Rows of an instance that died are claimed
// again once the lease runs out: that is the only way an event is delivered
// twice, under the same id.
import type { Logger } from "pino";
import type { Sql } from "../db/sql.js";
import type { EventName } from "./outbox.js";
import type { EventSink, OutboxEvent } from "./sink.js";

export interface RelayCounters {
  delivered(kind: EventSink["kind"]): void;
  failed(kind: EventSink["kind"]): void;
}

export interface RelayOptions {
  sql: Sql;
  sinks: readonly EventSink[];
  logger: Logger;
  retryMinMs: number;
  retryMaxMs: number;
  pollMs: number;
  /** How long a claim keeps other instances off; longer than any sink's time-out. */
  leaseMs: number;
  /** Rows claimed per round. */
  batchSize?: number;
  counters?: RelayCounters;
}

// Claims are serialised across instances by a transaction-scoped advisory
// lock, so each claim sees every earlier one committed. A claim takes, from
// the oldest WINDOW rows of one sink, those due now whose earlier rows in
// the same agent's queue are all due now too (so it takes a prefix of each
// queue, delivered in seq order). A row claimed by another instance, or
// waiting for its retry, holds back the rest of its agent's queue.
const CLAIM_LOCK_KEY = 0x61_67_65_76; // "agev"
const WINDOW = 1000;
const CLAIM = `
  UPDATE event_outbox SET not_before = now() + $2 * interval '1 millisecond'
  WHERE seq IN (
    SELECT w.seq FROM (
      SELECT seq, agent_id, not_before FROM event_outbox WHERE sink = $1 ORDER BY seq LIMIT ${WINDOW}
    ) w
    WHERE (w.not_before IS NULL OR w.not_before <= now())
      AND NOT EXISTS (
        SELECT 1 FROM event_outbox p
        WHERE p.sink = $1 AND p.agent_id = w.agent_id AND p.seq < w.seq AND p.not_before > now())
    ORDER BY w.seq LIMIT $3)
  RETURNING seq::text, event_id::text, sink, agent_id, name, payload, created_at, attempts`;
const DELIVERED = "DELETE FROM event_outbox WHERE seq = ANY($1::bigint[])";
const RETRY = `UPDATE event_outbox SET attempts = attempts + 1, not_before = now() + $2 * interval '1 millisecond' WHERE seq = $1`;
const RELEASE = "UPDATE event_outbox SET not_before = now() + $2 * interval '1 millisecond' WHERE seq = ANY($1::bigint[])";
const ORPHANS = "DELETE FROM event_outbox WHERE NOT (sink = ANY($1::text[])) RETURNING sink";

interface Row {
  seq: string;
  event_id: string;
  sink: string;
  agent_id: number;
  name: EventName;
  payload: string;
  created_at: Date | string;
  attempts: number;
}

export class Relay {
  private stopped = false;
  private running: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  private woken = false;
  private readonly bySink: Map<string, EventSink>;

  constructor(private readonly options: RelayOptions) {
    this.bySink = new Map(options.sinks.map((sink) => [sink.name, sink]));
  }

  /**
   * Starts delivering. `embedded`: this process is the database's only user
   * (PGlite), so claims left by a previous run of it (killed while
   * delivering) are released at once instead of after their lease.
   */
  async start(embedded: boolean): Promise<void> {
    const names = [...this.bySink.keys()];
    // Rows for a sink no longer configured would never be delivered.
    const orphans = await this.options.sql.query<{ sink: string }>(ORPHANS, [names]);
    if (orphans.length > 0) this.options.logger.warn({ rows: orphans.length }, "dropped undelivered events of sinks no longer configured");
    if (embedded) await this.options.sql.query("UPDATE event_outbox SET not_before = NULL");
    this.running = this.loop();
  }

  /** An event was just recorded: deliver without waiting for the next poll. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** Stops after the deliveries in flight; undelivered rows stay for the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.running;
    await Promise.all(this.options.sinks.map((sink) => sink.close()));
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      this.woken = false;
      let claimed = 0;
      try {
        claimed = await this.round();
      } catch (err) {
        this.options.logger.warn({ err: (err as Error).message }, "event relay: database unavailable, retrying");
      }
      // A full batch may mean more is waiting; otherwise sleep until woken or the next poll.
      if (claimed < (this.options.batchSize ?? 100) && !this.woken && !this.stopped) await this.sleep(this.options.pollMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = done;
    }).finally(() => {
      this.wakeUp = null;
    });
  }

  /** One claim per sink and their deliveries; returns the most rows one sink claimed. */
  private async round(): Promise<number> {
    const counts = await Promise.all(
      [...this.bySink.values()].map(async (sink) => {
        const rows = await this.options.sql.transaction(async (tx) => {
          await tx.query("SELECT pg_advisory_xact_lock($1)", [CLAIM_LOCK_KEY]);
          return tx.query<Row>(CLAIM, [sink.name, this.options.leaseMs, this.options.batchSize ?? 100]);
        });
        rows.sort((a, b) => Number(BigInt(a.seq) - BigInt(b.seq)));
        // In seq order, one after the other: each agent's events in its order.
        await this.deliverQueue(sink, rows);
        return rows.length;
      }),
    );
    return Math.max(0, ...counts);
  }

  private async deliverQueue(sink: EventSink, queue: Row[]): Promise<void> {
    const { sql, counters, logger } = this.options;
    const delivered: string[] = [];
    try {
      for (const [index, row] of queue.entries()) {
        try {
          await sink.deliver(toEvent(row));
        } catch (err) {
          counters?.failed(sink.kind);
          const waitMs = this.backoff(row.attempts);
          logger.warn({ sink: sink.kind, event: row.event_id, attempts: row.attempts + 1, retryInMs: waitMs, err: (err as Error).message }, "event delivery failed");
          await sql.query(RETRY, [row.seq, waitMs]);
          // The sink is likely down: the rest of this batch waits with it rather than failing one by one.
          const rest = queue.slice(index + 1).map((r) => r.seq);
          if (rest.length > 0) await sql.query(RELEASE, [rest, waitMs]);
          return;
        }
        counters?.delivered(sink.kind);
        delivered.push(row.seq);
      }
    } finally {
      if (delivered.length > 0) await sql.query(DELIVERED, [delivered]);
    }
  }

  private backoff(attempts: number): number {
    const { retryMinMs, retryMaxMs } = this.options;
    return Math.min(retryMaxMs, retryMinMs * 2 ** Math.min(attempts, 30));
  }
}

function toEvent(row: Row): OutboxEvent {
  return {
    seq: row.seq,
    eventId: row.event_id,
    agentId: row.agent_id,
    name: row.name,
    payload: row.payload,
    createdAt: row.created_at instanceof Date ? row.created_at : new Date(row.created_at),
  };
}
