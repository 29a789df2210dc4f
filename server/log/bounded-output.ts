import type { Writable } from "node:stream";

/** The two lines an output writes about its own losses, in its own format. */
export interface DropNotices {
  /** Queued right after the last line kept, when dropping starts (beyond the limit: one line per stall). */
  dropping(limit: number): string;
  /** Written once the output has taken everything queued again, with the number of lines lost in between. */
  dropped(count: number): string;
}

/**
 * Lines held while the target is busy are joined into one string every this
 * many: pino builds each line by concatenation, and V8 keeps such a string as
 * a tree of pieces several times its length until it is flattened. Held
 * lines therefore cost about their own length, which is what the limit counts.
 */
const JOIN_EVERY = 256;

/**
 * A line output that never holds more than `limit` characters (about bytes:
 * log lines are ASCII JSON) for a slow or stuck reader, and never blocks:
 * lines that do not fit are dropped and counted.
 *
 * One write at a time is handed to the target; lines written meanwhile wait
 * here and leave together, in one write, when it is done (so under load many
 * lines share one system call). The target must write without blocking the
 * event loop, as process.stdout and process.stderr do on a pipe, a socket or
 * a terminal switched to non-blocking writes (see stdio.ts); on a file they
 * write synchronously, which cannot stall.
 *
 * Once a line is dropped, every line is dropped until the target has written
 * everything queued, so a stuck reader gives one stall with one pair of
 * notices, not a warning per line; the second notice says how many.
 */
export class BoundedOutput {
  private dropped = 0;
  private held: string[] = [];
  private heldLength = 0;
  private joinedUpTo = 0;
  /** The characters handed to the target in the write not yet called back. */
  private inFlight = 0;
  private droppingSince: number | null = null;
  private broken = false;
  private failed: ((err: Error) => void) | null = null;
  private readonly flushWaiters: Array<() => void> = [];
  private readonly written = (err?: Error | null): void => this.onWritten(err);

  constructor(
    private readonly target: Writable,
    /** Most characters held for the target; serve sets it from AGENTD_LOG_BUFFER once the configuration is read. */
    public limit: number,
    private readonly notices: DropNotices,
  ) {
    // A reader that went away (EPIPE) or a full disk (ENOSPC) must not crash
    // the process: the output goes quiet and keeps counting what it drops.
    // Node's stream is done once it has failed, so the output stays quiet.
    target.on("error", (err: Error) => this.fail(err));
  }

  /** Sets who is called once, with the error, if the target fails: someone else must say so. */
  onFailure(listener: (err: Error) => void): void {
    this.failed = listener;
  }

  /** Every line dropped since the start: the counter behind agentd_log_lines_dropped_total. */
  get droppedLines(): number {
    return this.dropped;
  }

  /** Queues one line (or several, newline-terminated) unless that would exceed the limit. */
  write(text: string): boolean {
    if (this.broken || this.droppingSince !== null) return this.drop();
    if (this.inFlight + this.heldLength + text.length > this.limit) {
      this.droppingSince = this.dropped;
      this.hold(this.notices.dropping(this.limit));
      return this.drop();
    }
    this.hold(text);
    return true;
  }

  /** Calls back once everything queued has been written, or the target has failed. Also what pino's logger.flush() calls. */
  flush(callback: () => void): void {
    if (this.idle()) process.nextTick(callback);
    else this.flushWaiters.push(callback);
  }

  /**
   * Waits until everything queued is written, at most `deadlineMs`: true if
   * it was. What is still queued at the deadline is abandoned to process.exit().
   */
  flushWithin(deadlineMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), deadlineMs);
      this.flush(() => {
        clearTimeout(timer);
        resolve(!this.broken);
      });
    });
  }

  private hold(text: string): void {
    this.held.push(text);
    this.heldLength += text.length;
    if (this.held.length - this.joinedUpTo >= JOIN_EVERY) {
      this.held.push(this.held.splice(this.joinedUpTo).join(""));
      this.joinedUpTo = this.held.length;
    }
    if (this.inFlight === 0) this.handOver();
  }

  /** Hands everything held to the target in one write, unless a write is still in flight. */
  private handOver(): void {
    if (this.inFlight > 0 || this.heldLength === 0) return;
    const text = this.held.length === 1 ? this.held[0]! : this.held.join("");
    this.held = [];
    this.heldLength = 0;
    this.joinedUpTo = 0;
    this.inFlight = text.length;
    this.target.write(text, this.written);
  }

  private drop(): false {
    this.dropped++;
    return false;
  }

  private idle(): boolean {
    return this.broken || (this.inFlight === 0 && this.heldLength === 0);
  }

  private fail(err: Error): void {
    const first = !this.broken;
    this.broken = true;
    this.held = [];
    this.heldLength = 0;
    this.wakeFlushWaiters();
    if (first) this.failed?.(err);
  }

  private onWritten(err?: Error | null): void {
    this.inFlight = 0;
    if (err) return this.fail(err);
    if (this.heldLength > 0) return this.handOver();
    if (this.droppingSince !== null) {
      // Everything held has been written: the output takes writes again. Say
      // what was lost, in the place it was lost.
      const count = this.dropped - this.droppingSince;
      this.droppingSince = null;
      this.hold(this.notices.dropped(count));
      return;
    }
    if (this.idle()) this.wakeFlushWaiters();
  }

  private wakeFlushWaiters(): void {
    for (const waiter of this.flushWaiters.splice(0)) waiter();
  }
}
