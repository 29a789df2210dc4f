import { pino, type Logger, type LoggerOptions } from "pino";
import type { Config } from "../config/config.js";
import type { BoundedOutput, DropNotices } from "./bounded-output.js";

type LogLevel = Config["logLevel"];

function options(level: LogLevel): LoggerOptions {
  return { level, base: { service: "agentd" } };
}

/** The process logger: JSON lines (pino) on a bounded output, written without ever blocking. */
export function createLogger(output: BoundedOutput, level: LogLevel): Logger {
  return pino(options(level), output);
}

/**
 * The drop notices as warnings in the log's own JSON format, so a log
 * shipper sees them like any other line, in the place where lines are missing.
 * They are formatted by a second pino logger whose destination only keeps
 * the last line, since the output cannot go through the logger it serves.
 */
export function logLineNotices(): DropNotices {
  let line = "";
  const format = pino(options("warn"), { write: (text: string) => (line = text) });
  return {
    dropping(limit) {
      format.warn({ logBufferBytes: limit }, "log output stalled: dropping log lines until it accepts writes again");
      return line;
    },
    dropped(count) {
      format.warn({ droppedLines: count }, `log output resumed: ${count} log lines dropped`);
      return line;
    },
  };
}
