// agentctl's logic, separate from the bin entry point (client/agentctl.ts) so
// the entry stays a two-liner. Built only on the public client (and the
// package's version, read where the server reads it).
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import {
  AgentdConfigError,
  AgentdNetworkError,
  createAgentdClient,
  type AgentdClient,
  type AgentdResult,
  type AgentStatus,
} from "./index.js";
import { baseUrlProblem, tokenProblem } from "./checks.js";
import { terminalSafe, terminalSafeJson } from "./terminal-text.js";
import { buildVersion } from "../server/package-root.js";

const DEFAULT_URL = "https://localhost:9493/1.0";
/** Seconds a command waits for its answer: a server that accepts and never answers would otherwise hold a script for minutes (undici's own bound). */
const DEFAULT_TIMEOUT_SECONDS = 30;
/** The API's base path, as the default URL ends with it. */
const BASE_PATH = new URL(DEFAULT_URL).pathname;

/** Exit codes: the CLI's contract with scripts. */
const EXIT = { ok: 0, apiError: 1, usage: 2 } as const;

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

const processIo: CliIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

interface GlobalOptions {
  url: string;
  token?: string;
  cacert?: string;
  timeout: number;
  json: boolean;
}

/**
 * Standard output's failures, for the bin. A reader that stops early
 * (`agentctl agents list | head -1`, `| grep -q`) closes the pipe: no one
 * reads the rest, which is no failure of the command, so the rest is
 * dropped quietly and the command's own exit code stands (0 when it
 * worked: a script under `set -o pipefail` must not fail for it; 1 when
 * the API refused). Any other failure (a full disk) is one `error:` line
 * and exit 1, not a stack trace.
 */
export function guardOutput(): { exit(code: number): void } {
  let failed = false;
  const onError = (err?: NodeJS.ErrnoException | null) => {
    if (!err || err.code === "EPIPE" || failed) return;
    failed = true;
    process.stderr.write(`error: cannot write the output: ${err.message}\n`);
  };
  process.stdout.on("error", onError);
  return {
    // Once what was written is out (the empty write's callback says whether
    // it could be: the stream's error event may come only later), rather
    // than when nothing is left to do: a connection undici is still making
    // (a TLS handshake that never ends) would hold the process past
    // --timeout, for undici's own bound.
    exit: (code) =>
      process.stdout.write("", (err) => {
        onError(err);
        process.stderr.write("", () => process.exit(failed ? EXIT.apiError : code));
      }),
  };
}

/** Runs agentctl with the user arguments (no `node` / script path); resolves to the exit code. */
export async function runAgentctl(args: string[], io: CliIo = processIo): Promise<number> {
  // Set by the action that ran, read after parsing: commander actions cannot return values.
  let exitCode: number = EXIT.ok;
  const program = buildProgram(io, (code) => (exitCode = code));
  try {
    await program.parseAsync(args, { from: "user" });
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      // commander already printed the message; --help and --version exit 0.
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (err instanceof AgentdConfigError) {
      io.err(`error: ${terminalSafe(err.message)}\n`);
      return EXIT.usage;
    }
    if (err instanceof AgentdNetworkError) {
      io.err(`error: ${terminalSafe(err.message)}${networkHint(err, program.opts<GlobalOptions>().cacert)}\n`);
      return EXIT.apiError;
    }
    io.err(`error: ${terminalSafe(err instanceof Error ? err.message : String(err))}\n`);
    return EXIT.apiError;
  }
}

function buildProgram(io: CliIo, setExit: (code: number) => void): Command {
  const program = new Command("agentctl")
    .description("Command-line client of the agent service.")
    .version(buildVersion(), "-V, --version", "print the version")
    // Before any .command(): subcommands copy these settings when created.
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.out(text), writeErr: (text) => io.err(text) })
    .showHelpAfterError("(run with --help for usage)")
    .addOption(new Option("--url <url>", "base URL of the service").env("AGENTD_URL").default(DEFAULT_URL).argParser(parseUrl))
    .addOption(
      new Option("--token <token>", "authentication token (prefer the env variable: argv is visible to other users)").env(
        "AGENTD_TOKEN",
      ),
    )
    .addOption(
      new Option("--cacert <file>", "PEM file of a CA certificate to trust (e.g. a server's self-signed certificate)").env(
        "AGENTD_CACERT",
      ),
    )
    .addOption(
      new Option("--timeout <seconds>", "seconds to wait for the answer before giving up (exit 1)")
        .env("AGENTD_TIMEOUT")
        .default(DEFAULT_TIMEOUT_SECONDS)
        .argParser(parseTimeout),
    )
    .option("--json", "print JSON instead of a table (for scripts)", false)
    .addHelpText("after", "\nExit codes: 0 success, 1 API or network error (a time-out included), 2 usage error.");

  const agents = program.command("agents").description("inspect, pause and unpause agents");

  // Each action builds its client from the global options and reports one result.
  const withClient = async (
    cmd: Command,
    work: (client: AgentdClient, opts: GlobalOptions, signal: AbortSignal) => Promise<number>,
  ): Promise<void> => {
    const opts = cmd.optsWithGlobals<GlobalOptions>();
    opts.token = opts.token?.trim();
    if (!opts.token) {
      cmd.error("error: missing token: pass --token or set AGENTD_TOKEN", { exitCode: EXIT.usage });
    }
    const badToken = tokenProblem(opts.token);
    if (badToken !== undefined) cmd.error(`error: the token ${badToken}`, { exitCode: EXIT.usage });
    const client = createAgentdClient({
      baseUrl: opts.url,
      token: opts.token,
      ...(opts.cacert ? { ca: opts.cacert } : {}),
    });
    const signal = AbortSignal.timeout(opts.timeout * 1000);
    try {
      setExit(await work(client, opts, signal));
    } catch (err) {
      if (!signal.aborted || err !== signal.reason) throw err;
      io.err(`error: no answer from ${terminalSafe(opts.url)} within ${opts.timeout} s (--timeout, AGENTD_TIMEOUT)\n`);
      setExit(EXIT.apiError);
    } finally {
      // Past the time-out, a connection still being made (a handshake that
      // never ends) would hold close() for undici's own bound: the bin exits
      // once the output is written instead.
      if (signal.aborted) void client.close().catch(() => undefined);
      else await client.close();
    }
  };

  agents
    .command("list")
    .description("list every agent")
    .action(async (_opts: unknown, cmd: Command) =>
      withClient(cmd, async (client, opts, signal) =>
        report(io, opts, await client.listAgents({ signal }), (list) =>
          opts.json ? json(list) : agentTable(list),
        ),
      ),
    );

  agents
    .command("get")
    .description("show one agent, by identifier or by number")
    .addOption(new Option("--id <id>", "numeric identifier of the agent").argParser(parsePositiveInt).conflicts("number"))
    .addOption(new Option("--number <number>", "agent number").argParser(parseAgentNumber).conflicts("id"))
    .action(async (local: { id?: number; number?: string }, cmd: Command) => {
      if (local.id === undefined && local.number === undefined) {
        cmd.error("error: exactly one of --id or --number is required", { exitCode: EXIT.usage });
      }
      await withClient(cmd, async (client, opts, signal) => {
        const result =
          local.id !== undefined ? await client.getAgentById(local.id, { signal }) : await client.getAgentByNumber(local.number!, { signal });
        return report(io, opts, result, (agent) => (opts.json ? json(agent) : agentDetails(agent)));
      });
    });

  agents
    .command("pause")
    .description("pause a logged-in agent")
    .argument("<number>", "agent number", parseAgentNumber)
    .option("--reason <text>", "reason shown to supervisors")
    .action(async (number: string, local: { reason?: string }, cmd: Command) =>
      withClient(cmd, async (client, opts, signal) =>
        report(io, opts, await client.pauseAgentByNumber(number, local.reason, { signal }), () =>
          opts.json
            ? json({ number, paused: true, paused_reason: local.reason ?? null })
            : `agent ${number} paused${local.reason === undefined ? "" : ` (reason: ${terminalSafe(local.reason)})`}\n`,
        ),
      ),
    );

  agents
    .command("unpause")
    .description("end the pause of a logged-in agent (not an error when it is not paused)")
    .argument("<number>", "agent number", parseAgentNumber)
    .action(async (number: string, _local: unknown, cmd: Command) =>
      withClient(cmd, async (client, opts, signal) =>
        report(io, opts, await client.unpauseAgentByNumber(number, { signal }), () =>
          opts.json ? json({ number, paused: false, paused_reason: null }) : `agent ${number} unpaused\n`,
        ),
      ),
    );

  return program;
}

/** Certificate errors that mean "not trusted", not "broken" (undici and OpenSSL's codes). */
const UNTRUSTED_CERTIFICATE = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
]);

// The two mistakes of a first run, said in the user's terms: a server's
// self-signed certificate not passed, and a plain http:// URL to a service
// that speaks HTTPS only (which closes the connection without an answer).
function networkHint(err: AgentdNetworkError, cacert: string | undefined): string {
  if (err.code !== undefined && UNTRUSTED_CERTIFICATE.has(err.code)) {
    return cacert
      ? "\n  the server's certificate is not trusted by the --cacert (or AGENTD_CACERT) file given: it must be that server's own certificate, or its CA's (a default server's is <data dir>/tls/cert.pem, renewed if deleted)"
      : "\n  the server's certificate is not trusted: pass it (or its CA's) with --cacert or AGENTD_CACERT; a default server writes its own to <data dir>/tls/cert.pem";
  }
  if (err.url.startsWith("http://") && (err.code === "UND_ERR_SOCKET" || err.code === "ECONNRESET")) {
    return "\n  the connection was closed without an answer: the service speaks HTTPS only, so its URL starts with https://";
  }
  return "";
}

/** An empty value, from AGENTD_URL as from --url, counts as unset, as the server reads its own variables. */
function parseUrl(value: string): string {
  if (value === "") return DEFAULT_URL;
  const problem = baseUrlProblem(value);
  if (problem !== undefined) throw new InvalidArgumentError(problem);
  return value;
}

// Anything else goes to the service, whose 400 names what is wrong; an empty
// number would not reach the operation at all (`/agents/by-number//pause`
// is a path the API does not have, a 404 that says nothing of the number).
function parseAgentNumber(value: string): string {
  if (value === "") throw new InvalidArgumentError("must not be empty");
  // Dot segments, which URL parsing removes: `/agents/by-number/..` is the list.
  if (value === "." || value === "..") throw new InvalidArgumentError("must not be . or ..");
  return value;
}

/** Seconds, as a decimal number above 0; at most a day (AbortSignal.timeout's bound is some 24 days). */
function parseTimeout(value: string): number {
  if (value === "") return DEFAULT_TIMEOUT_SECONDS;
  const seconds = Number(value);
  if (!/^[0-9]+(\.[0-9]+)?$/.test(value) || seconds <= 0 || seconds > 86_400) {
    throw new InvalidArgumentError("must be a number of seconds above 0, at most 86400");
  }
  return seconds;
}

function parsePositiveInt(value: string): number {
  if (!/^[0-9]+$/.test(value)) throw new InvalidArgumentError("must be a positive integer");
  const n = Number(value);
  if (n < 1 || n > 2147483647) throw new InvalidArgumentError("must be between 1 and 2147483647");
  return n;
}

// API errors go to stderr as `error: <status> <error>`; with --json the body
// also goes to stdout so scripts can branch on the stable `error` identifier.
function report<T>(io: CliIo, opts: GlobalOptions, result: AgentdResult<T>, render: (data: T) => string): number {
  if (result.ok) {
    io.out(render(result.data));
    return EXIT.ok;
  }
  const details = (result.error.details ?? []).map((d) => `\n  ${d.location} ${terminalSafe(d.path)}: ${terminalSafe(d.message)}`).join("");
  // `not found` is the answer to a path the API does not have (an unknown agent is `no such agent`):
  // most often a URL without the API's base path.
  const lacksBasePath = !opts.url.replace(/\/+$/, "").endsWith(BASE_PATH);
  const hint =
    result.status === 404 && result.error.error === "not found" && lacksBasePath
      ? `\n  no such path under ${terminalSafe(opts.url)}: does the URL end with the API's base path (…${BASE_PATH})?`
      : "";
  io.err(`error: ${result.status} ${terminalSafe(result.error.error)}${details}${hint}\n`);
  if (opts.json) io.out(json({ status: result.status, ...result.error }));
  return EXIT.apiError;
}

function json(value: unknown): string {
  return `${terminalSafeJson(JSON.stringify(value, null, 2))}\n`;
}

const show = (v: string | number | boolean | null): string => (v === null ? "-" : terminalSafe(String(v)));

function agentTable(list: AgentStatus[]): string {
  const header = ["ID", "NUMBER", "LOGGED", "PAUSED", "REASON", "EXTENSION", "CONTEXT", "INTERFACE"];
  const rows = list.map((a) =>
    [a.id, a.number, a.logged ? "yes" : "no", a.paused ? "yes" : "no", a.paused_reason, a.extension, a.context, a.state_interface].map(
      show,
    ),
  );
  return alignedTable([header, ...rows]);
}

function agentDetails(a: AgentStatus): string {
  return alignedTable(Object.entries(a).map(([k, v]) => [`${k}:`, show(v)]));
}

function alignedTable(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  ").trimEnd()).join("\n") + "\n";
}
