import type { Writable } from "node:stream";

/** The two lines an output writes about its own losses, in its own format. */
export interface DropNotices {
  /** Queued right after the last line kept, when dropping starts (beyond the limit: one line per stall). */
  dropping(limit: number): string;
  /** Written once the output has taken everything queued again, with the number of lines lost in between. */
  dropped(count: number): string;
}

/**
 * A line output that never holds more than `limit` characters (about bytes:
 * log lines are ASCII JSON) waiting for a slow or stuck reader, and never
 * blocks: lines that do not fit are dropped and counted.
 *
 * The target must write asynchronously without blocking the event loop,
 * as process.stdout and process.stderr do on a pipe, a socket or a terminal
 * switched to non-blocking writes (see stdio.ts); on a file they write
 * synchronously, which cannot stall. Its writableLength is then exactly
 * what Node holds in memory for it, which is what the limit bounds.
 *
 * Once a line is dropped, every line is dropped until the target has written
 * everything queued (so a stuck reader gives one stall with one pair of
 * notices, not a warning per line), and the second notice says how many.
 */
export class BoundedOutput {
  /** Every line dropped since the start: the counter behind agentd_log_lines_dropped_total. */
  droppedLines = 0;
  private droppingSince: number | null = null;
  private broken = false;
  private readonly flushWaiters: Array<() => void> = [];
  /** One callback for every write, bound once: it runs when that write has left the process. */
  private readonly written = (err?: Error | null): void => this.onWritten(err);

  constructor(
    private readonly target: Writable,
    /** Most characters held for the target; set from AGENTD_LOG_BUFFER once the configuration is read. */
    public limit: number,
    private readonly notices: DropNotices,
  ) {
    // A reader that went away (EPIPE) must not crash the server: the output
    // goes quiet and keeps counting what it drops.
    target.on("error", () => {
      this.broken = true;
      this.wakeFlushWaiters();
    });
  }

  /** Queues one line (or several, newline-terminated) unless that would exceed the limit. */
  write(text: string): boolean {
    if (this.broken || this.droppingSince !== null) return this.drop();
    if (this.target.writableLength + text.length > this.limit) {
      this.droppingSince = this.droppedLines;
      this.target.write(this.notices.dropping(this.limit), this.written);
      return this.drop();
    }
    this.target.write(text, this.written);
    return true;
  }

  /** Calls back once everything queued has been written, or the target has failed. Used by pino's logger.flush(). */
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

  private drop(): false {
    this.droppedLines++;
    return false;
  }

  private idle(): boolean {
    return this.broken || this.target.writableLength === 0;
  }

  private onWritten(err?: Error | null): void {
    if (err) this.broken = true;
    if (!this.idle()) return;
    if (this.droppingSince !== null && !this.broken) {
      const count = this.droppedLines - this.droppingSince;
      this.droppingSince = null;
      // The output takes writes again: say what was lost, in the place it was lost.
      this.target.write(this.notices.dropped(count), this.written);
      return;
    }
    this.wakeFlushWaiters();
  }

  private wakeFlushWaiters(): void {
    for (const waiter of this.flushWaiters.splice(0)) waiter();
  }
}
