import type { Logger } from "pino";
import type { BoundedOutput } from "../log/bounded-output.js";

/** What the stop needs of the server once it is up: server/serve.ts's RunningServer. */
interface Stoppable {
  close(): Promise<void>;
}

export interface SignalStop {
  /** Hands over the started server; a signal that came during the start stops it now. */
  serving(server: Stoppable): void;
  /**
   * Stops the server as a signal does, for a failure it cannot serve
   * through (the embedded database stopped), said on standard error and in
   * the log once serving (during the start, the start fails with it);
   * `stopped` then resolves with the failure code whatever the stop does,
   * so that a supervisor starts the process again.
   */
  fail(reason: Error): void;
  /** Resolves with the exit code once a signal has stopped the server: 0, or 1 if the stop failed or came from `fail`. */
  stopped: Promise<number>;
}

/**
 * SIGTERM and SIGINT stop the server: drained, in-flight requests finished,
 * the database closed. Registered before the start, so a signal at any
 * moment of it (opening and migrating the database, the first admin token)
 * waits for the start to end and then stops as any other, rather than
 * finding Node's default, which ends the process mid-write with the port
 * perhaps open.
 *
 * A second signal ends the process at once: the operator insists, whatever
 * hangs (the start, requests, the database, a log nobody reads). It is said
 * first, in the log too, so that a log ending without "stopped" tells why;
 * an output that is stuck may lose it (log-output.test.ts).
 *
 * `fail` stops the same way for a failure the server cannot serve through,
 * and the process then exits with the failure code. A signal during such a
 * stop is the operator's first, not a second one.
 */
export function stopOnSignals(options: {
  logger: Logger;
  stderr: BoundedOutput;
  /** The longest a stop may take, from its beginning; the process then exits 1 whatever still runs. */
  boundMs: number;
  failureCode: number;
}): SignalStop {
  const { logger, stderr, boundMs, failureCode } = options;
  let server: Stoppable | null = null;
  let signalled = false;
  let failure: Error | null = null;
  let stopping = false;
  let resolve!: (code: number) => void;
  const stopped = new Promise<number>((done) => (resolve = done));

  // The bound counts from the stop's beginning: a signal during the start
  // waits for the start, which has bounds of its own (AGENTD_DB_TIMEOUT).
  const close = (running: Stoppable): void => {
    if (stopping) return;
    stopping = true;
    const bound = setTimeout(() => {
      stderr.write(`agentd: shutdown did not finish within ${boundMs} ms; exiting\n`);
      process.exit(failureCode);
    }, boundMs);
    bound.unref();
    void running.close().finally(() => clearTimeout(bound)).then(
      () => {
        // The last line of a clean stop: a log without it ended otherwise.
        logger.info("stopped");
        resolve(failure === null ? 0 : failureCode);
      },
      (err: unknown) => {
        logger.error({ err }, "shutdown failed");
        resolve(failureCode);
      },
    );
  };

  /** Said once the server is up: a failure during the start is the start's own error, which the command prints. */
  const stopForFailure = (running: Stoppable, reason: Error): void => {
    logger.error({ err: reason }, "shutting down: the server cannot go on serving");
    stderr.write(`agentd: ${reason.message}; shutting down\n`);
    close(running);
  };

  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) {
      logger.warn({ signal }, "signal again while shutting down: exiting now, without waiting for requests in flight");
      stderr.write(`agentd: ${signal} again while shutting down: exiting now, without waiting for requests in flight\n`);
      process.exit(failureCode);
    }
    signalled = true;
    logger.info({ signal }, server === null ? "shutting down once started" : "shutting down");
    if (server !== null) close(server);
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);

  return {
    fail(reason) {
      if (failure !== null) return;
      failure = reason;
      if (server !== null) stopForFailure(server, reason);
    },
    serving(running) {
      server = running;
      if (failure !== null) {
        stopForFailure(running, failure);
      } else if (signalled) {
        logger.info("shutting down");
        close(running);
      }
    },
    stopped,
  };
}
