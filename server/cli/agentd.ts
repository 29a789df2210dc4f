#!/usr/bin/env node
import { readFile } from "node:fs/promises";
import path from "node:path";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import ms from "ms";
import { dispatchAdmin } from "../admin/dispatch.js";
import { MAX_TTL_SECONDS } from "../admin/run-admin.js";
import { aclProblem } from "../auth/acl.js";
import type { AdminRequest, AdminResponse, ListedToken, SinkFailuresAnswer } from "../admin/protocol.js";
import type { Config } from "../config/config.js";
import { loadConfig, loadDotEnv, unknownVariables } from "../config/load.js";
import { renderEnvHelp } from "../config/env-docs.js";
import { sinkDisplayName, sinkNameFromArgument, sinkSummaries } from "../events/sink.js";
import { describeFailure } from "../failure.js";
import { createLogger } from "../log/logger.js";
import { flushStdio, openStdio } from "../log/stdio.js";
import { isLoopback } from "../ops/listener.js";
import { buildVersion } from "../package-root.js";
import { readFirstLine } from "./read-line.js";
import { stopOnSignals } from "./stop-on-signals.js";
import { terminalSafe, terminalSafeJson } from "../../client/terminal-text.js";

/** Read once: `--version` and the serve command's banner show it. */
const VERSION = buildVersion();

/** Exit codes: 0 success, 1 failure, 2 usage or configuration error. */
const FAILURE = 1;
const USAGE = 2;

/** What the CLI may hold for a reader of its output before it has read its configuration (messages, a token). */
const MESSAGES_BUFFER_BYTES = 1024 * 1024;
/** How long the output may take to be written before the process exits anyway, dropping the rest. */
const FINAL_FLUSH_MS = 2000;
/** On top of AGENTD_SHUTDOWN_TIMEOUT and the final flush: closing the database and the admin socket. */
const SHUTDOWN_MARGIN_MS = 2000;

/**
 * Every byte the process prints goes through these: bounded, and never a
 * write that blocks, so a reader that stops reading can neither grow the
 * process's memory nor keep it from exiting.
 */
const stdio = openStdio(MESSAGES_BUFFER_BYTES);

class CliFailure extends Error {
  constructor(
    message: string,
    readonly exitCode = FAILURE,
  ) {
    super(message);
  }
}

function configFromEnvironment(): Config {
  loadDotEnv(process.cwd());
  for (const name of unknownVariables(process.env)) {
    stdio.stderr.write(`agentd: ${name} is not a variable agentd reads: ignored (the README's Configuration lists them)\n`);
  }
  const result = loadConfig(process.env);
  if (!result.ok) {
    throw new CliFailure(["invalid configuration:", ...result.errors.map((e) => `  ${e}`)].join("\n"), USAGE);
  }
  return result.config;
}

/** Serves until SIGTERM or SIGINT (stop-on-signals.ts), then resolves with the exit code once the server has stopped. */
async function serve(): Promise<number> {
  const config = configFromEnvironment();
  stdio.stdout.limit = config.logBufferBytes;
  const logger = createLogger(stdio.stdout, config.logLevel);
  const stop = stopOnSignals({
    logger,
    stderr: stdio.stderr,
    boundMs: config.drainDelayMs + config.shutdownTimeoutMs + FINAL_FLUSH_MS + SHUTDOWN_MARGIN_MS,
    failureCode: FAILURE,
  });
  // Loaded here, not at the top: the server (Express, the validator) is
  // slow to load, which every admin command (import, token) would otherwise
  // pay for nothing. Its own chunk: the bundle it loads lies beside it.
  const { loadServing } = await import("./load-serving.js");
  const { serving, pgliteThread, codeCache, saveCodeCache } = await loadServing(config);
  // Nothing more can be read or written, and only a new process can open
  // the data directory again: exit 1 for a supervisor to start one.
  void pgliteThread?.stopped.then((reason) => stop.fail(reason));
  logger.debug({ codeCache }, "server code loaded");
  const { startServer } = await serving.loadServer();
  let server;
  try {
    server = await startServer(config, logger, pgliteThread);
  } catch (err) {
    if (err instanceof serving.DataDirBusyError) throw new CliFailure(`agentd: ${err.message}; refusing to start a second server on it`);
    throw err;
  }
  // Once serving: the cache then holds all the start compiled, and a start
  // that failed leaves none behind.
  saveCodeCache().then(
    (saved) => {
      if (saved === "written") logger.debug("code cache written");
      if (saved === "no folder") logger.debug(`no code cache: ${config.dataDir} does not exist`);
    },
    (err: unknown) => logger.warn({ err }, "cannot write the code cache: the next start compiles the server again"),
  );
  server.metrics?.counterFrom(
    "agentd_log_lines_dropped_total",
    "Log lines dropped because standard output was not read fast enough (AGENTD_LOG_BUFFER was full), or had failed (its reader gone, a full disk).",
    () => stdio.stdout.droppedLines + stdio.stderr.droppedLines,
  );
  const lines = [
    `agentd is serving ${server.url}`,
    `  version:     ${VERSION}`,
    `  database:    ${config.databaseUrl ? "PostgreSQL" : `embedded (PGlite) in ${config.dataDir}`}`,
    `  certificate: ${server.certPath}`,
    `  SHA-256:     ${server.fingerprint256}`,
    `  auth:        ${config.authUrl ? `external service ${config.authUrl}` : "embedded tokens"}`,
    `  events:      ${sinkSummaries(config.events).join("; ") || "none (AGENTD_WEBHOOK_URLS, AGENTD_BUS_URL)"}`,
    `  operator:    ${server.opsUrl ? `${server.opsUrl} (/healthz, /readyz, /metrics)` : "off (AGENTD_OPS_PORT=off)"}`,
  ];
  const exposed = server.opsUrl !== null && !isLoopback(config.opsHost);
  if (exposed) {
    lines.push(
      "",
      `  Warning: the operator listener is bound to ${config.opsHost}, not loopback. It serves plain HTTP without`,
      "  authentication: anyone who can reach it reads the metrics (request rates, errors, dependencies) and can",
      "  probe readiness. Keep it on a private network, or set AGENTD_OPS_HOST=127.0.0.1.",
    );
  }
  if (server.certificateProblem !== null) {
    lines.push("", `  Warning: ${server.certificateProblem}.`);
  }
  if (server.adminToken) {
    lines.push(
      "",
      `  Admin token (ACL agentd.#), shown only this once: ${server.adminToken}`,
      "  More tokens:  npx agentd token create --acl 'agentd.agents.read' --ttl 1h",
      `  Try it:       curl --cacert ${server.certPath} -H "X-Auth-Token: ${server.adminToken}" ${server.url}/agents`,
    );
  }
  // The banner is for a terminal; a pipeline that ships the JSON log sees the start, and an exposed listener, too.
  logger.info({ url: server.url, version: VERSION, opsUrl: server.opsUrl }, "serving");
  if (exposed) logger.warn({ opsHost: config.opsHost }, "the operator listener is not on loopback: anyone who reaches it reads the metrics (AGENTD_OPS_HOST)");
  stdio.stderr.write(lines.join("\n") + "\n\n");
  // After the banner, in the same turn: a signal during the start stops the
  // server only once its first admin token has been shown.
  stop.serving(server);
  return stop.stopped;
}

/** Runs an admin command: through the running server, or here (admin/dispatch.ts). */
async function admin(request: AdminRequest): Promise<AdminResponse> {
  // Run from the wrong directory, a command would otherwise work on a new
  // database of its own, which the server never sees, without a word.
  const announce = (dataDir: string) =>
    stdio.stderr.write(
      `agentd: no embedded database in ${path.resolve(dataDir)} yet: creating a new one ` +
        `(AGENTD_DATABASE_URL is set neither in the environment nor in ${path.join(process.cwd(), ".env")}; AGENTD_DATA_DIR says which data directory to use)\n`,
    );
  return dispatchAdmin(configFromEnvironment(), createLogger(stdio.stderr, "warn"), request, announce);
}

function check(answer: AdminResponse): Extract<AdminResponse, { ok: true }> {
  if (answer.ok) return answer;
  const problems = answer.problems?.map((p) => `  ${p}`) ?? [];
  throw new CliFailure([`agentd: ${answer.error}`, ...problems].join("\n"));
}

/**
 * Prints what a command produced on standard output and makes sure it left:
 * a token that nobody could read is a failure, not a success with the token lost.
 */
async function printResult(text: string): Promise<void> {
  const kept = stdio.stdout.write(text);
  if (!kept || !(await stdio.stdout.flushWithin(FINAL_FLUSH_MS))) {
    throw new CliFailure(`agentd: standard output not written within ${FINAL_FLUSH_MS} ms (is anything reading it?)`);
  }
}

/** The longest line read as a token: far above any real one (43 characters, or AGENTD_ADMIN_TOKEN's). */
const TOKEN_LINE_LIMIT = 4096;

/** The token to revoke, from the first line of standard input (typed at a prompt when it is a terminal). */
async function tokenFromStdin(): Promise<string> {
  if (process.stdin.isTTY) stdio.stderr.write("token to revoke: ");
  let line;
  try {
    line = await readFirstLine(process.stdin, TOKEN_LINE_LIMIT);
  } catch (err) {
    throw new CliFailure(`agentd: cannot read the token from standard input: ${describeFailure(err)}`, USAGE);
  }
  if (line === null) throw new CliFailure("agentd: no token on standard input (or give --id ID)", USAGE);
  return line;
}

/** `token list` as a table, oldest first; the ACLs last, as they vary in length. */
function tokenTable(tokens: ListedToken[], now: Date): string {
  return table([
    ["ID", "EXPIRES", "CREATED", "ACL"],
    ...tokens.map((t) => [
      t.id,
      t.expiresAt === null ? "never" : new Date(t.expiresAt) <= now ? `${t.expiresAt} (expired)` : t.expiresAt,
      t.createdAt,
      t.acls.join(" "),
    ]),
  ]);
}

/** Rows (a header first) as aligned columns; the last one is not padded, as it varies in length. */
function table(rows: string[][]): string {
  const last = rows[0]!.length - 1;
  const widths = rows[0]!.map((_cell, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => (column < last ? cell.padEnd(widths[column]!) : cell)).join("  ")).join("\n") + "\n";
}

function parseTtl(value: string): number {
  const millis = /^\d+$/.test(value) ? Number(value) * 1000 : ms(value as ms.StringValue);
  if (typeof millis !== "number" || !Number.isFinite(millis) || millis < 1000 || millis > MAX_TTL_SECONDS * 1000) {
    throw new InvalidArgumentError("expected a duration from 1s to 100 years, e.g. 30m, 12h, 7d or a number of seconds");
  }
  return Math.round(millis / 1000);
}

function parseSink(value: string): string {
  try {
    return sinkNameFromArgument(value);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

function parseEventId(value: string): string {
  // The outbox keys events by UUID: anything else could name no event, and PostgreSQL would refuse it.
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) throw new InvalidArgumentError("expected an event id, a UUID");
  return value.toLowerCase();
}

const events = (count: number): string => `${count} undelivered event${count === 1 ? "" : "s"}`;

/** `events list --sink`: the sink's failing events, as a table or as JSON; what the table leaves out is said on standard error. */
async function printFailures(failures: SinkFailuresAnswer, json: boolean): Promise<void> {
  const sink = sinkDisplayName(failures.sink);
  if (json) {
    await printResult(terminalSafeJson(JSON.stringify({ ...failures, sink }, null, 2)) + "\n");
    return;
  }
  if (failures.events.length === 0) {
    stdio.stderr.write(`no failed delivery to ${sink} (${events(failures.pending)})\n`);
    return;
  }
  await printResult(
    table([
      ["EVENT", "AGENT", "NAME", "RECORDED", "ATTEMPTS", "NEXT TRY", "LAST ERROR"],
      ...failures.events.map((e) => [e.event, String(e.agent), e.name, e.recorded, String(e.attempts), e.due || e.nextTry === null ? "due" : e.nextTry, oneLine(e.lastError ?? "not recorded")]),
    ]),
  );
  const more = failures.failing - failures.events.length;
  stdio.stderr.write(`${failures.failing} of ${events(failures.pending)} of ${sink} failed${more > 0 ? ` (the ${more} newest not shown)` : ""}\n`);
}

/** A reason on one line of the table, and safe for a terminal: it may come from a receiver, or hold a library's line breaks. */
function oneLine(text: string): string {
  return terminalSafe(text.replace(/\s+/g, " "));
}

function program(): Command {
  const cli = new Command("agentd")
    .description("The agent service: serve the API and administer its tokens, agents and undelivered events.")
    .version(VERSION, "-V, --version", "print the version")
    .exitOverride()
    .configureOutput({ writeOut: (text) => stdio.stdout.write(text), writeErr: (text) => stdio.stderr.write(text) })
    .showHelpAfterError();

  cli
    .command("serve")
    .description("serve the API over HTTPS (configured by AGENTD_* environment variables)")
    .addHelpText("after", "\n" + renderEnvHelp())
    .action(async () => {
      served = await serve();
    });

  const token = cli.command("token").description("manage embedded tokens");
  token
    .command("create")
    .description("create a token: prints it on standard output (shown only this once) and its id on standard error")
    .requiredOption("--acl <acl...>", "ACLs the token grants, e.g. agentd.agents.read or agentd.#")
    .option("--ttl <duration>", "expire after this long (e.g. 30m, 12h, 7d); default: never", parseTtl)
    .action(async (options: { acl: string[]; ttl?: number }, command: Command) => {
      const problem = options.acl.map(aclProblem).find((found) => found !== null);
      if (problem !== undefined && problem !== null) command.error(`error: option '--acl <acl...>': ${problem}`, { exitCode: USAGE });
      const answer = check(await admin({ op: "token.create", acls: options.acl, ttlSeconds: options.ttl ?? null }));
      await printResult(`${answer.token}\n`);
      stdio.stderr.write(`token id: ${answer.id} (to revoke it: agentd token revoke --id ${answer.id})\n`);
      // Created all the same (a deployment may move back to its own tokens), but said, or it looks
      // usable. The configuration that ran the command decides: the running server's, through its socket.
      if (answer.authUrl) {
        stdio.stderr.write(`agentd: warning: AGENTD_AUTH_URL is set, so the server checks every token with ${answer.authUrl} and never reads its own: this token is refused there until AGENTD_AUTH_URL is unset\n`);
      }
    });
  token
    .command("list")
    .description("list the tokens: id, expiry, creation time and ACLs (never the token itself)")
    .option("--json", "print a JSON array of {id, acls, expiresAt, createdAt} instead of a table")
    .action(async (options: { json?: boolean }) => {
      const tokens = check(await admin({ op: "token.list" })).tokens ?? [];
      await printResult(options.json ? JSON.stringify(tokens, null, 2) + "\n" : tokenTable(tokens, new Date()));
    });
  token
    .command("revoke")
    .description("revoke a token, read from standard input (one line), or the token with --id")
    .argument("[token]", "the token, or - to read it from standard input (the default); giving it here is discouraged: it shows in ps and shell history")
    .option("--id <id>", "revoke the token with this id (see token list) instead")
    .action(async (value: string | undefined, options: { id?: string }) => {
      if (options.id !== undefined && value !== undefined) throw new CliFailure("agentd: give either a token or --id, not both", USAGE);
      let request: AdminRequest;
      if (options.id !== undefined) {
        request = { op: "token.revoke-id", id: options.id };
      } else if (value === undefined || value === "-") {
        request = { op: "token.revoke", token: await tokenFromStdin() };
      } else {
        stdio.stderr.write(
          "agentd: warning: a token on the command line shows in ps and stays in shell history; " +
            "pass it on standard input (agentd token revoke -) or revoke it by id (agentd token revoke --id ID)\n",
        );
        request = { op: "token.revoke", token: value };
      }
      const answer = check(await admin(request));
      if (!answer.revoked) throw new CliFailure("agentd: no such token");
      stdio.stderr.write("token revoked\n");
    });

  cli
    .command("import")
    .description("insert or update agents from a JSON file (an array of agent statuses, as GET /agents answers them; origin_uuid is ignored)")
    .argument("<file>", "path to the JSON file")
    .option("--replace", "the file is the whole fleet: remove the agents it does not name (the demo agents of a new embedded database, say)")
    .action(async (file: string, options: { replace?: boolean }) => {
      let text: string;
      try {
        text = await readFile(file, "utf8");
      } catch (err) {
        throw new CliFailure(`agentd: cannot read ${file}: ${(err as Error).message}`);
      }
      const answer = check(await admin({ op: options.replace === true ? "import.replace" : "import", text }));
      const removed = answer.removed === undefined ? "" : `, removed ${answer.removed} the file does not name`;
      stdio.stderr.write(`imported ${answer.imported} agents${removed}\n`);
    });

  const outbox = cli.command("events").description("the events not yet delivered, by sink (the bus or a webhook URL)");
  outbox
    .command("list")
    .description(
      "print, for each sink with events waiting: how many, the oldest's time, whether it is configured, the sink; " +
        "with --sink, that sink's events whose delivery failed, oldest first: id, agent, name, recorded, attempts, next try, last error",
    )
    .option("--sink <sink>", "bus, or the webhook's URL: list its events that failed (each holds back its agent's later events there)", parseSink)
    .option(
      "--json",
      "print a JSON array of {sink, pending, oldest, configured} instead (sink: bus or the URL; [] when nothing waits); " +
        "with --sink, {sink, pending, failing, events: [{event, agent, name, recorded, attempts, nextTry, due, lastError}]}",
    )
    .action(async (options: { json?: boolean; sink?: string }) => {
      if (options.sink !== undefined) {
        await printFailures(check(await admin({ op: "events.failing", sink: options.sink })).failures!, options.json === true);
        return;
      }
      const sinks = check(await admin({ op: "events.list" })).sinks ?? [];
      if (options.json) {
        await printResult(JSON.stringify(sinks.map((s) => ({ ...s, sink: sinkDisplayName(s.sink) })), null, 2) + "\n");
        return;
      }
      if (sinks.length === 0) {
        stdio.stderr.write("no undelivered events\n");
        return;
      }
      await printResult(
        table([
          ["PENDING", "OLDEST", "SINK STATE", "SINK"],
          ...sinks.map((s) => [String(s.pending), s.oldest, s.configured ? "configured" : "not configured", sinkDisplayName(s.sink)]),
        ]),
      );
    });
  outbox
    .command("drop")
    .description("delete the undelivered events of a sink that is no longer configured, or one event of any sink, and say how many")
    .requiredOption("--sink <sink>", "bus, or the webhook's URL (written any way the URL standard reads as the same URL)", parseSink)
    .option("--force", "drop them even though the sink is configured (its events are then lost)")
    .addOption(
      new Option("--event <id>", "drop only this event (its id, as events list --sink, the delivery failure log and webhook-id name it), configured sink or not")
        .argParser(parseEventId)
        .conflicts("force"),
    )
    .action(async (options: { sink: string; force?: boolean; event?: string }) => {
      const answer = check(
        await admin(options.event === undefined ? { op: "events.drop", sink: options.sink, force: options.force === true } : { op: "events.drop-event", sink: options.sink, event: options.event }),
      );
      // A named event that is not there failed, as `token revoke` of an unknown token does: a script learns its id was wrong.
      if (options.event !== undefined && answer.dropped === 0) throw new CliFailure(`agentd: no undelivered event ${options.event} of ${sinkDisplayName(options.sink)}`);
      const what = options.event === undefined ? events(answer.dropped ?? 0) : `event ${options.event}`;
      stdio.stderr.write(`dropped ${what} of ${sinkDisplayName(options.sink)}\n`);
    });

  return cli;
}

/** The exit code of `serve` once it has stopped; admin commands that return succeeded. */
let served = 0;
let exitCode: number;
try {
  // `agentd` alone serves. Not commander's default command: that would take
  // a mistyped command for serve's argument ("too many arguments for 'serve'").
  const args = process.argv.slice(2);
  await program().parseAsync(args.length === 0 ? ["serve"] : args, { from: "user" });
  exitCode = served;
} catch (err) {
  if (err instanceof CommanderError) {
    exitCode = err.exitCode === 0 ? 0 : USAGE;
  } else if (err instanceof CliFailure) {
    stdio.stderr.write(err.message + "\n");
    exitCode = err.exitCode;
  } else {
    // Whatever failed (a start-up step on a path, a library's plain object), the message is readable.
    stdio.stderr.write(`agentd: ${describeFailure(err)}\n`);
    exitCode = FAILURE;
  }
}
// Whatever the reader of the output does, the process ends within the flush deadline.
await flushStdio(stdio, FINAL_FLUSH_MS);
process.exit(exitCode);
