// Delivers the outbox (written by store/agent-change.ts) after commit:
// claims rows, hands them to their sink, deletes what was delivered, and
// schedules a retry of what was not, with exponential backoff between
// retryMinMs and retryMaxMs.
//
// Order per agent: a claim takes a prefix of each (sink, agent) queue, its
// rows are delivered one after the other, and a row stays in the outbox
// until its sink has it, so an agent's next event waits for the previous
// one on that sink. Different agents' rows are delivered side by side, and
// each sink has a loop of its own: a slow or unreachable receiver holds
// back only its own events, and an agent held back (its event refused)
// only its own.
//
// Several instances on one PostgreSQL: a claim is one short statement (an
// advisory lock, then one UPDATE) that sets not_before to now + lease, so
// no other instance takes the rows while this one delivers, without
// holding a transaction open across the network (PGlite serialises
// transactions: one held open would stall the API). Rows of an instance
// that died are claimed again once the lease runs out. That, and a
// DELETE of delivered rows that fails (deliverQueue), are the ways an
// event is delivered twice, under the same id.
import type { Logger } from "pino";
import { DatabaseUnavailableError, type Sql } from "../db/sql.js";
import { describeFailure } from "../failure.js";
import type { EventName } from "../store/agent-change.js";
import { DeliveryRefused, sinkLogName, type EventSink, type OutboxEvent } from "./sink.js";

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
  /** Rows claimed per round (default DEFAULT_BATCH). */
  batchSize?: number;
  /** Agents whose rows are delivered at the same time, each agent's in order (default DEFAULT_CONCURRENCY). */
  concurrency?: number;
  /** Embedded database only: VACUUM the outbox after this many delivered rows (default DEFAULT_VACUUM_EVERY). */
  vacuumEvery?: number;
  counters?: RelayCounters;
  /** The clock of the outage log's reminders (default Date.now). */
  now?: () => number;
}

// A round claims in one of two ways, each a prefix of each agent's queue,
// up to the batch (the SQL functions are the database migrations'):
// - the oldest (CLAIM_OLDEST, PEEK_OLDEST; migration 4): the due rows among
//   the sink's oldest, a window of twice the batch. One statement, the
//   cheapest, and most rounds claim so. But agents held back with rows
//   queued fill the window, and the others' rows behind them are not read
//   that way;
// - by agent (AGENTS, then CLAIM_BY_AGENT, PEEK_BY_AGENT; migration 11):
//   the next agents with rows after the last one read, twice the batch's
//   number of them, then their due rows. An agent held back costs one read
//   however long its queue, so no agent hides another; the next such
//   round goes on from the first agent that may have more due (one that
//   took its whole share, a tenth of a batch, or the one the batch ended
//   in), else after the last agent read, from the first again once all
//   were read. A round claims so when the oldest gave it nothing, and,
//   while the oldest give less than a batch, every other round at most
//   once per poll interval.
// On PostgreSQL each claim is one statement that serialises claims across
// instances and leases the rows. On the embedded database this relay is the
// only one and the rounds of one sink never overlap (each sink's loop runs
// one at a time), so it only reads the due rows (PEEK_*): no lease to write.
const WINDOW_PER_BATCH = 2;
const AGENTS_PER_BATCH = 2;
const DEFAULT_BATCH = 100;
const DEFAULT_CONCURRENCY = 16;
const DEFAULT_VACUUM_EVERY = 10_000;
/** How often a continuing database outage is logged again. */
const OUTAGE_REMINDER_MS = 60_000;
const CLAIM_OLDEST = "SELECT * FROM event_outbox_claim($1, $2, $3, $4)";
const PEEK_OLDEST = "SELECT * FROM event_outbox_peek($1, $2, $3)";
const AGENTS = "SELECT agent_id FROM event_outbox_agents($1, $2, $3)";
const CLAIM_BY_AGENT = "SELECT * FROM event_outbox_claim_of($1, $2, $3::integer[], $4, $5)";
const PEEK_BY_AGENT = "SELECT * FROM event_outbox_peek_of($1, $2::integer[], $3, $4)";
/** A claim by agent takes at most this share of a batch from one agent. */
const AGENT_SHARE = 0.1;
const MAINTAIN = "VACUUM (ANALYZE) event_outbox";
const DELIVERED = "DELETE FROM event_outbox WHERE seq = ANY($1::bigint[])";
const RETRY = `UPDATE event_outbox SET attempts = attempts + 1, not_before = now() + $2 * interval '1 millisecond', last_error = $3 WHERE seq = $1`;
/** The most characters of a reason kept with an event (`agentd events list --sink`); the log has it whole. */
const LAST_ERROR_LENGTH = 500;
const RELEASE = "UPDATE event_outbox SET not_before = now() + $2 * interval '1 millisecond' WHERE seq = ANY($1::bigint[])";

/** Where one sink's claims by agent stand. */
interface ByAgent {
  /** The next claim by agent reads the agents after this one (0: from the first). */
  after: number;
  /** Before this time (performance.now()) no round claims by agent ahead of the oldest. */
  notBefore: number;
  /** The next round claims by agent first. */
  first: boolean;
}

/**
 * A sink that looked down (no answer, or an answer about the receiver
 * rather than the event) in the last rounds: none of its events goes out
 * before `until` (performance.now()), not even one recorded meanwhile, and
 * the next round sends its events one at a time (deliverQueue).
 */
interface Down {
  /** Rounds in a row that found the sink down: the exponent of its hold's backoff. */
  streak: number;
  until: number;
}

/**
 * What a round could not write back because the database failed: its
 * delivered rows to delete, and its claimed rows to hand back (each list
 * with the wait before it is due). Written first thing once the database
 * answers again (round): otherwise the delivered rows would go out again,
 * and every row would wait out its lease, holding back its agent's later
 * events.
 */
interface Unsettled {
  delivered: string[];
  release: { seqs: string[]; waitMs: number }[];
  /** When the rows were claimed (performance.now()): past half the lease a leftover's rows are not handed back (settleLeftover), being due soon anyway, maybe claimed by another instance. */
  claimedAt: number;
}

/** A row as event_outbox_claim and event_outbox_peek return it (one sink's: they take its name). */
interface Row {
  seq: string;
  event_id: string;
  agent_id: number;
  name: EventName;
  payload: string;
  created_at: Date | string;
  attempts: number;
}

export class Relay {
  private stopped = false;
  private stopping: Promise<void> | null = null;
  private running: Promise<unknown> | null = null;
  /** Each sink's loop's way to end its sleep, while it sleeps. */
  private readonly wakeUps = new Set<() => void>();
  /** Counts wake() calls: a loop woken during its round goes on without sleeping. */
  private wakes = 0;
  private readonly sinks: EventSink[];
  private embedded = false;
  private deliveredSinceVacuum = 0;
  /** Where each sink's claims by agent stand (claimByAgent). */
  private readonly byAgent: Map<string, ByAgent>;
  /** By sink name: what a round that failed could not write back (Unsettled). */
  private readonly unsettled = new Map<string, Unsettled>();
  /** The sinks that looked down, by name, until their retry. */
  private readonly down = new Map<string, Down>();
  /** A database outage, as the loops see it together: logged once, not once per sink. */
  private failedRounds = 0;
  private warnedAt = 0;

  constructor(private readonly options: RelayOptions) {
    this.sinks = [...new Map(options.sinks.map((sink) => [sink.name, sink])).values()];
    this.byAgent = new Map(this.sinks.map((sink) => [sink.name, { after: 0, notBefore: 0, first: false }]));
  }

  /**
   * Starts delivering. `embedded`: this process is the database's only user
   * (PGlite), so claims left by a previous run of it (killed while
   * delivering) are released at once instead of after their lease.
   */
  async start(embedded: boolean): Promise<void> {
    // Rows of sinks not configured here are left alone (outbox-sinks.ts):
    // only `agentd events drop` deletes an undelivered event.
    if (embedded) {
      await this.options.sql.query("UPDATE event_outbox SET not_before = NULL");
      await this.options.sql.query(MAINTAIN);
    }
    this.embedded = embedded;
    for (const sink of this.sinks) sink.prepare?.();
    this.running = Promise.all(this.sinks.map((sink) => this.loop(sink)));
  }

  /** An event was just recorded: deliver without waiting for the next poll. */
  wake(): void {
    this.wakes++;
    for (const wakeUp of this.wakeUps) wakeUp();
  }

  /** Stops once the deliveries in flight end (no new one starts); undelivered rows stay for the next start. Calls after the first wait for it. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.stopped = true;
      this.wake();
      await this.running;
      await Promise.all(this.options.sinks.map((sink) => sink.close()));
    })();
    return this.stopping;
  }

  /** One sink's deliveries, round after round, until stopped. */
  private async loop(sink: EventSink): Promise<void> {
    while (!this.stopped) {
      // A sink that looked down waits out its retry, whatever is recorded
      // meanwhile (a wake ends the sleep; the loop then sleeps the rest).
      const heldMs = (this.down.get(sink.name)?.until ?? 0) - performance.now();
      if (heldMs > 0) {
        await this.sleep(heldMs);
        continue;
      }
      const wakes = this.wakes;
      let more = false;
      try {
        more = await this.round(sink);
        this.databaseAnswered();
      } catch (err) {
        this.roundFailed(err);
      }
      // Unless more may be waiting, sleep until woken or the next poll.
      if (!more && this.wakes === wakes && !this.stopped) await this.sleep(this.options.pollMs);
    }
  }

  // An outage is logged when it starts, then at most once a minute, and
  // when it ends: the relay retries every poll, in every sink's loop, which
  // would otherwise be a line each time.
  private databaseAnswered(): void {
    if (this.failedRounds > 0) this.options.logger.info({ failedRounds: this.failedRounds }, "event relay: database available again");
    this.failedRounds = 0;
  }

  private roundFailed(err: unknown): void {
    this.failedRounds++;
    const now = (this.options.now ?? Date.now)();
    if (!(err instanceof DatabaseUnavailableError)) {
      // Not an outage: a fault that every round should report.
      this.options.logger.error({ err }, "event relay: round failed, retrying");
    } else if (this.failedRounds === 1 || now - this.warnedAt >= OUTAGE_REMINDER_MS) {
      this.warnedAt = now;
      this.options.logger.warn({ err: err.message, failedRounds: this.failedRounds }, "event relay: database unavailable, retrying");
    }
  }

  private sleep(ms: number): Promise<void> {
    let wakeUp = (): void => undefined;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      wakeUp = done;
      this.wakeUps.add(wakeUp);
    }).finally(() => {
      this.wakeUps.delete(wakeUp);
    });
  }

  /** One claim of `sink`'s due rows and their deliveries; returns whether more may be due now (a full batch, or an agent that took its whole share). */
  private async round(sink: EventSink): Promise<boolean> {
    await this.settleLeftover(sink);
    const limit = this.options.batchSize ?? DEFAULT_BATCH;
    const claimedAt = performance.now();
    // Each way, when it claims nothing, lets the other try in the same
    // round (nothing claimed, so nothing is read twice). A round that found
    // fewer than a batch among the oldest, maybe past agents held back in
    // the window, has the next round claim by agent first, at most once per
    // poll interval.
    const byAgent = this.byAgent.get(sink.name)!;
    let rows: Row[];
    let agentMore = false;
    if (byAgent.first) {
      byAgent.first = false;
      ({ rows, more: agentMore } = await this.claimByAgent(sink, byAgent, limit));
      if (rows.length === 0) rows = await this.claimOldest(sink, limit);
    } else {
      rows = await this.claimOldest(sink, limit);
      if (rows.length === 0) ({ rows, more: agentMore } = await this.claimByAgent(sink, byAgent, limit));
      else if (rows.length < limit && claimedAt >= byAgent.notBefore) byAgent.first = true;
    }
    rows.sort((a, b) => Number(BigInt(a.seq) - BigInt(b.seq)));
    // Seq order: each agent's rows in the order of its changes.
    const down = this.down.get(sink.name);
    const { delivered, waitMs } = await this.deliverQueue(sink, rows, claimedAt, down);
    if (waitMs !== null) {
      // A delivery that got through in the same round starts the streak again.
      this.down.set(sink.name, { streak: delivered > 0 ? 1 : (down?.streak ?? 0) + 1, until: performance.now() + waitMs });
    } else if (rows.length > 0) {
      // The sink answered (a delivery, or a refusal of one event): it is up.
      this.down.delete(sink.name);
    }
    if (this.embedded) await this.vacuumNow(delivered);
    return waitMs === null && (rows.length >= limit || agentMore);
  }

  /** The due rows among the sink's oldest (the first way of the claim, above). */
  private claimOldest(sink: EventSink, limit: number): Promise<Row[]> {
    const window = WINDOW_PER_BATCH * limit;
    return this.embedded
      ? this.options.sql.query<Row>(PEEK_OLDEST, [sink.name, limit, window])
      : this.options.sql.query<Row>(CLAIM_OLDEST, [sink.name, this.options.leaseMs, limit, window]);
  }

  /** The due rows of the sink's next agents (the second way of the claim, above), and whether one of them took its whole share. */
  private async claimByAgent(sink: EventSink, byAgent: ByAgent, limit: number): Promise<{ rows: Row[]; more: boolean }> {
    const { sql } = this.options;
    byAgent.notBefore = performance.now() + this.options.pollMs;
    const reach = AGENTS_PER_BATCH * limit;
    const agentsAfter = async (after: number): Promise<number[]> =>
      (await sql.query<{ agent_id: number }>(AGENTS, [sink.name, after, reach])).map((row) => row.agent_id);
    let agents = await agentsAfter(byAgent.after);
    // Past the last agent: the first ones, now rather than a round later.
    if (agents.length === 0 && byAgent.after > 0) agents = await agentsAfter(0);
    if (agents.length === 0) {
      byAgent.after = 0;
      return { rows: [], more: false };
    }
    const share = Math.max(1, Math.floor(limit * AGENT_SHARE));
    const rows = this.embedded
      ? await sql.query<Row>(PEEK_BY_AGENT, [sink.name, agents, limit, share])
      : await sql.query<Row>(CLAIM_BY_AGENT, [sink.name, this.options.leaseMs, agents, limit, share]);
    const taken = new Map<number, number>();
    for (const row of rows) taken.set(row.agent_id, (taken.get(row.agent_id) ?? 0) + 1);
    const full = [...taken].filter(([, count]) => count >= share).map(([agent]) => agent);
    // The next goes on from the first agent that may have more due (one
    // that took its whole share, or the one the batch ended in), else after
    // the last agent read, or from the first once the last agent with rows
    // was read.
    const resumeAt = full.length > 0 ? Math.min(...full) : rows.length >= limit ? Math.max(...taken.keys()) : null;
    byAgent.after = resumeAt !== null ? resumeAt - 1 : agents.length < reach ? 0 : agents.at(-1)!;
    return { rows, more: resumeAt !== null };
  }

  /**
   * Delivers a claimed batch: each agent's rows one after the other, in seq
   * order, and different agents' rows side by side (at most `concurrency`
   * agents at a time), so one receiver's round trip does not hold up every
   * other agent's events. Each delivered row is deleted as soon as it is
   * delivered (the deletions of rows delivered meanwhile go together), so
   * only a crash between a delivery and its deletion, or a failed
   * deletion (below), sends an event again.
   *
   * A refused event (DeliveryRefused: the sink answered) waits for its
   * retry and holds back its agent's later rows only; the claim takes no
   * row of an agent after one that waits. Any other failure makes the sink
   * look down: that row waits for its retry, every row not yet sent (of
   * any agent) is released to wait with it rather than fail one by one,
   * and the returned `waitMs` holds the sink's loop until then (round),
   * for a time that grows with the rounds in a row that found it down.
   *
   * After a round that found it down (`down`), the rows go one at a time,
   * the agents whose first row failed the fewest times first: while the
   * receiver is still down, one event fails, not one per agent. Once one
   * got through, a failure is that event's, held back like a refusal: the
   * receiver is up, and fails those events (say, on their text), which
   * then come last in such a round and do not hold back the others for
   * good. Deliveries already in flight finish; once the relay is stopping,
   * none starts.
   *
   * Leased rows (PostgreSQL): no delivery starts after half the lease, and
   * the rows not yet sent are released at once. A slow receiver could
   * otherwise keep this instance on an agent's queue past its lease, and
   * another instance would claim the same rows and send them too, out of
   * order with this one's. (The lease is more than twice any delivery's
   * time-out, so what started before half of it ends within it.)
   */
  private async deliverQueue(
    sink: EventSink,
    queue: Row[],
    claimedAt: number,
    down: Down | undefined,
  ): Promise<{ delivered: number; waitMs: number | null }> {
    const { sql, counters, logger } = this.options;
    const byAgent = new Map<number, Row[]>();
    for (const row of queue) {
      const rows = byAgent.get(row.agent_id);
      if (rows) rows.push(row);
      else byAgent.set(row.agent_id, [row]);
    }
    let delivered = 0;
    const unsent: string[] = [];
    /** Rows handed back at once: past half the lease, once stopping, after a failed DELETE, and an agent's rows after its refused one. */
    const handedBack: string[] = [];
    let waitMs: number | null = null;
    const leaseHalf = claimedAt + this.options.leaseMs / 2;

    // Delivered rows waiting for their DELETE; one DELETE runs at a time and
    // takes all that came meanwhile, so the rows are deleted in the order
    // they were delivered. After a failed DELETE (the database went away)
    // no other is tried and no delivery starts: what stays undeleted is the
    // tail of each agent's delivered rows, which the finally below tries
    // once more in one statement, and which is otherwise sent again, in
    // order, once the database is back.
    const toDelete: string[] = [];
    const deletion: { running: Promise<void> | null; failure: Error | undefined } = { running: null, failure: undefined };
    const deleteDelivered = (): Promise<void> => {
      if (deletion.failure !== undefined || toDelete.length === 0) return deletion.running ?? Promise.resolve();
      return (deletion.running ??= (async () => {
        try {
          while (toDelete.length > 0 && deletion.failure === undefined) {
            const seqs = toDelete.splice(0);
            try {
              await sql.query(DELIVERED, [seqs]);
            } catch (err) {
              toDelete.unshift(...seqs);
              deletion.failure = err instanceof Error ? err : new Error(String(err));
            }
          }
        } finally {
          deletion.running = null;
        }
      })());
    };

    const deliverAgent = async (rows: Row[]): Promise<void> => {
      for (const [index, row] of rows.entries()) {
        if (waitMs !== null) {
          unsent.push(...rows.slice(index).map((r) => r.seq));
          return;
        }
        if (this.stopped || deletion.failure !== undefined || (!this.embedded && performance.now() > leaseHalf)) {
          handedBack.push(...rows.slice(index).map((r) => r.seq));
          return;
        }
        try {
          await sink.deliver(toEvent(row));
        } catch (err) {
          counters?.failed(sink.kind);
          // After the sink looked down, once a delivery of this round got through, a failure is this event's, as a refusal is.
          const sinkDown = !(err instanceof DeliveryRefused) && (down === undefined || delivered === 0);
          const rowWaitMs = this.backoff(row.attempts);
          const reason = describeFailure(err);
          // The sink's hold grows with the streak, not with this event's attempts: one event that
          // failed many times would otherwise hold back every other for the longest wait.
          if (sinkDown) waitMs = this.backoff(down?.streak ?? 0);
          // `to` names the receiver (its URL without the query, which may hold a secret): one failing among several is found at once.
          logger.warn(
            { sink: sink.kind, to: sinkLogName(sink.name), event: row.event_id, attempts: row.attempts + 1, retryInMs: rowWaitMs, err: reason },
            "event delivery failed",
          );
          try {
            await sql.query(RETRY, [row.seq, rowWaitMs, storedReason(reason)]);
          } catch (retryFailure) {
            // Not recorded: the row and the agent's later ones wait for the retry all the same.
            unsent.push(...rows.slice(index).map((r) => r.seq));
            throw retryFailure;
          }
          (sinkDown ? unsent : handedBack).push(...rows.slice(index + 1).map((r) => r.seq));
          return;
        }
        counters?.delivered(sink.kind);
        delivered++;
        toDelete.push(row.seq);
        void deleteDelivered();
      }
    };

    const agents = [...byAgent.values()];
    // A stable sort: among equals, seq order stays.
    if (down !== undefined) agents.sort((a, b) => a[0]!.attempts - b[0]!.attempts);
    const worker = async (): Promise<void> => {
      for (let rows = agents.shift(); rows !== undefined; rows = agents.shift()) await deliverAgent(rows);
    };
    try {
      // Settle every worker before recording outcomes, so no delivery is still in flight when its row is kept or deleted.
      const concurrency = down !== undefined ? 1 : (this.options.concurrency ?? DEFAULT_CONCURRENCY);
      const outcomes = await Promise.allSettled(Array.from({ length: Math.min(concurrency, agents.length) }, worker));
      const failure = outcomes.find((outcome) => outcome.status === "rejected");
      if (failure) throw failure.reason;
    } finally {
      await deletion.running;
      // Agents no worker reached (each worker ended at a failure): handed back with the rest.
      for (const rows of agents.splice(0)) handedBack.push(...rows.map((r) => r.seq));
      // The rest, and after a failure everything left, in one statement: all of it is deleted or none.
      await this.settle(sink, {
        delivered: toDelete.splice(0),
        release: [
          { seqs: unsent, waitMs: waitMs ?? this.options.retryMinMs },
          { seqs: handedBack, waitMs: 0 },
        ],
        claimedAt,
      });
    }
    // A DELETE failed, then the one that took its rows succeeded: the round still says the database failed once.
    if (deletion.failure !== undefined) throw deletion.failure;
    return { delivered, waitMs };
  }

  /** Writes back what a round leaves (Unsettled); when the database fails, keeps it for the sink's next round, and throws. */
  private async settle(sink: EventSink, work: Unsettled): Promise<void> {
    const { sql } = this.options;
    try {
      if (work.delivered.length > 0) await sql.query(DELIVERED, [work.delivered]);
      work.delivered = [];
      while (work.release.length > 0) {
        const { seqs, waitMs } = work.release[0]!;
        if (seqs.length > 0) await sql.query(RELEASE, [seqs, waitMs]);
        work.release.shift();
      }
    } catch (err) {
      this.unsettled.set(sink.name, work);
      throw err;
    }
  }

  /** What the sink's last failed round could not write back, written now, before anything is claimed. */
  private async settleLeftover(sink: EventSink): Promise<void> {
    const work = this.unsettled.get(sink.name);
    if (work === undefined) return;
    this.unsettled.delete(sink.name);
    // Past half the lease, as deliveries stop there, the rows are not handed
    // back: the claim may lapse while the database just back answers, and a
    // hand-back then would free rows another instance has claimed since.
    if (!this.embedded && performance.now() - work.claimedAt >= this.options.leaseMs / 2) work.release = [];
    await this.settle(sink, work);
  }

  /**
   * PGlite runs no autovacuum: every delivered event leaves a dead row,
   * and the relay's question, which reads the sink's oldest rows, would
   * step over all of them, slower with every event ever sent. A VACUUM of
   * the small table now and then keeps it as fast as new. ANALYZE, with it and at start, gives the planner
   * the table's real size: never analysed, it takes any backlog for a
   * handful of rows and sorts all of it on every claim instead of reading
   * the oldest rows in index order. PostgreSQL's autovacuum does both on
   * its own.
   */
  private async vacuumNow(delivered: number): Promise<void> {
    this.deliveredSinceVacuum += delivered;
    if (this.deliveredSinceVacuum < (this.options.vacuumEvery ?? DEFAULT_VACUUM_EVERY)) return;
    this.deliveredSinceVacuum = 0;
    await this.options.sql.query(MAINTAIN);
  }

  private backoff(attempts: number): number {
    const { retryMinMs, retryMaxMs } = this.options;
    return Math.min(retryMaxMs, retryMinMs * 2 ** Math.min(attempts, 30));
  }
}

/** A failure's reason as the outbox keeps it: PostgreSQL's text holds no NUL, and the cut falls between characters, not inside one. */
function storedReason(reason: string): string {
  // eslint-disable-next-line no-control-regex -- NUL is what this removes
  return Array.from(reason.slice(0, 2 * LAST_ERROR_LENGTH).replace(/\u0000/g, "")).slice(0, LAST_ERROR_LENGTH).join("");
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
