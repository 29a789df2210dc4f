// Delivers the outbox (outbox.ts) after commit: claims rows, hands them to
// their sink, deletes what was delivered, and schedules a retry of what was
// not, with exponential backoff between retryMinMs and retryMaxMs.
//
// Order per agent: only the oldest row of each (sink, agent) is ever
// claimed, and a row stays in the outbox until its sink has it, so an
// agent's next event waits for the previous one on that sink.
//
// Several instances on one PostgreSQL: a claim is one statement that locks
// its rows FOR UPDATE SKIP LOCKED and sets not_before to now + lease, so no
// other instance takes them while this one delivers, without holding a
// transaction open across the network (PGlite serialises transactions: one
// held open would stall the API). Rows of an instance that died are claimed
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

const CLAIM = `
  UPDATE event_outbox SET not_before = now() + $2 * interval '1 millisecond'
  WHERE seq IN (
    SELECT seq FROM event_outbox e
    WHERE sink = ANY($1::text[]) AND (not_before IS NULL OR not_before <= now())
      AND NOT EXISTS (SELECT 1 FROM event_outbox p WHERE p.sink = e.sink AND p.agent_id = e.agent_id AND p.seq < e.seq)
    ORDER BY seq LIMIT $3
    FOR UPDATE SKIP LOCKED)
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

  /** One claim and its deliveries; returns how many rows it claimed. */
  private async round(): Promise<number> {
    const { sql } = this.options;
    const rows = await sql.query<Row>(CLAIM, [[...this.bySink.keys()], this.options.leaseMs, this.options.batchSize ?? 100]);
    const queues = new Map<string, Row[]>();
    for (const row of rows.sort((a, b) => Number(BigInt(a.seq) - BigInt(b.seq)))) {
      const queue = queues.get(row.sink) ?? [];
      queue.push(row);
      queues.set(row.sink, queue);
    }
    // Sinks in parallel; within a sink, one event after the other (rows of different agents).
    await Promise.all([...queues].map(([name, queue]) => this.deliverQueue(this.bySink.get(name)!, queue)));
    return rows.length;
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
