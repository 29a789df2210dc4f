import type { Writable } from "node:stream";
import { BoundedOutput, type DropNotices } from "./bounded-output.js";
import { describeFailure } from "../failure.js";
import { logLineNotices } from "./logger.js";

/**
 * The process's standard output (the JSON log of `serve`, what admin
 * commands print) and standard error (banner, messages), each bounded.
 * Nothing else in the process should write to process.stdout or stderr.
 */
export interface Stdio {
  stdout: BoundedOutput;
  stderr: BoundedOutput;
}

/** Opens both with the same limit (serve raises or lowers stdout's to AGENTD_LOG_BUFFER once it is read). */
export function openStdio(limit: number): Stdio {
  const stdout = new BoundedOutput(nonBlocking(process.stdout), limit, logLineNotices());
  const stderr = new BoundedOutput(nonBlocking(process.stderr), limit, textNotices("standard error"));
  // The log cannot say that it has stopped: standard error says it, once.
  stdout.onFailure((err) =>
    stderr.write(`agentd: standard output failed (${describeFailure(err)}): log lines are dropped from now on, counted in agentd_log_lines_dropped_total\n`),
  );
  return { stdout, stderr };
}

/**
 * Waits, at most `deadlineMs` in all, for both outputs to write what they hold:
 * the last step before process.exit(). A stuck reader costs the deadline, never a hang.
 */
export async function flushStdio(stdio: Stdio, deadlineMs: number): Promise<void> {
  await Promise.all([stdio.stdout.flushWithin(deadlineMs), stdio.stderr.flushWithin(deadlineMs)]);
}

function textNotices(what: string): DropNotices {
  return {
    dropping: () => `agentd: ${what} stalled: dropping output until it accepts writes again\n`,
    dropped: (count) => `agentd: ${what} resumed: ${count} lines dropped\n`,
  };
}

/**
 * On POSIX, Node makes writes to a terminal blocking (pipes and sockets are
 * already non-blocking, files cannot stall). A terminal paused with Ctrl-S
 * then freezes the whole event loop, signal handlers included. libuv opened
 * the terminal anew for this process, so switching that handle back to
 * non-blocking affects no other process. `setBlocking` is Node's internal
 * handle method (the one its tty module calls): guarded, since it is not public.
 */
function nonBlocking(stream: NodeJS.WriteStream): Writable {
  if (stream.isTTY) {
    const handle = (stream as unknown as { _handle?: { setBlocking?: (blocking: boolean) => number } })._handle;
    handle?.setBlocking?.(false);
  }
  return stream;
}
