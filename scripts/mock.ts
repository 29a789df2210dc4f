// npm run mock -- [--release <release>] [--delay <duration>] [prism mock options...]
// npm run mock -- --stateful [--agents N] [--delay <duration>] [--host H] [--port P]
//
// The stateless mock: on http://127.0.0.1:4010 (--host/-h, --port/-p), the
// front door (mock/front-door.ts) and behind it Prism answering from the
// examples of the working openapi.yaml, or with --release of a published
// release as it was frozen (releases/openapi-<release>.yaml), for a client of
// an older deployment. Every other argument goes to `prism mock` as it is.
// The front door reads JSON bodies as the server does and answers what
// Prism would fail on (a 500, or exiting), so one bad request cannot take
// a shared mock down.
//
// The stateful mock (mock/stateful.ts): the same address and paths, Prism
// still validating every request, and the service's own code behind it, so
// a pause shows on the next read and sends its events. Both answer
// POST /__mock/reset; only the stateful one has state to put back.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { load } from "js-yaml";
import { duration } from "../server/config/parsers.js";
import { loadConfig } from "../server/config/load.js";
import { CONTRACT } from "../server/contract.js";
import { exampleFleet, sizedFleet } from "../mock/fleet.js";
import { MAX_DELAY_MS, RESET_PATH, startFrontDoor } from "../mock/front-door.js";
import { generateWebhookSecret, LOOPBACK_HOSTS, startStatefulMock } from "../mock/stateful.js";
import { contractFile, frozenFile, frozenReleases, projectRoot } from "./lib/project.js";
import { sinkSummaries } from "../server/events/sink.js";
import { untilAnswering } from "../devkit/poll.js";
import { freePort } from "../devkit/ports.js";

const args = process.argv.slice(2);

function refuse(message: string): never {
  console.error(`npm run mock: ${message}`);
  process.exit(2);
}

/** Takes `--release <r>` or `--release=<r>` out of the arguments; undefined when absent. */
function takeRelease(): string | undefined {
  const at = args.findIndex((arg) => arg === "--release" || arg.startsWith("--release="));
  if (at < 0) return undefined;
  const [flag = ""] = args.splice(at, 1);
  const release = flag.includes("=") ? flag.slice("--release=".length) : args.splice(at, 1)[0];
  if (release === undefined || !existsSync(frozenFile(release))) refuse(`--release needs a published release: ${frozenReleases().join(", ")}`);
  return release;
}

/** Takes the value of `--<long>`/`-<short>` (`--port 4011`, `--port=4011`, `-p 4011`) out of the arguments; undefined when absent. */
function takeOption(long: string, short?: string): string | undefined {
  const at = args.findIndex((arg) => arg === `--${long}` || (short !== undefined && arg === `-${short}`) || arg.startsWith(`--${long}=`));
  if (at < 0) return undefined;
  const [flag = ""] = args.splice(at, 1);
  const value = flag.includes("=") ? flag.slice(flag.indexOf("=") + 1) : args.splice(at, 1)[0];
  if (value === undefined) refuse(`--${long} needs a value`);
  return value;
}

/** `--delay`'s value in milliseconds, as the server reads a duration (`300ms`, `2s`). */
function delayOption(text: string): number {
  let delayMs = 0;
  try {
    delayMs = duration(text, 0);
  } catch (err) {
    refuse(`--delay ${text}: ${(err as Error).message}`);
  }
  if (delayMs > MAX_DELAY_MS) refuse(`--delay ${text}: at most ${MAX_DELAY_MS} ms`);
  return delayMs;
}

async function stateless(release: string | undefined): Promise<void> {
  const spec = release === undefined ? contractFile : frozenFile(release);
  const host = takeOption("host", "h") ?? "127.0.0.1";
  const portText = takeOption("port", "p") ?? "4010";
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65_535) refuse(`--port ${portText}: must be a port number from 0 to 65535`);
  const delayText = takeOption("delay");
  const delayMs = delayText === undefined ? 0 : delayOption(delayText);
  // Prism would print its whole help for an argument it does not know.
  if (takeOption("agents") !== undefined) refuse("--agents sizes the stateful mock's fleet: npm run mock -- --stateful --agents N");
  const loaded = loadConfig(process.env);
  if (!loaded.ok) refuse(`the environment's AGENTD_* settings are not valid:\n${loaded.errors.join("\n")}`);

  // Prism on a port of its own on loopback, behind the front door.
  const prismPort = await freePort();
  const prismArgs = ["mock", path.relative(projectRoot, spec), ...args, "--host", "127.0.0.1", "--port", String(prismPort)];
  console.error(`prism ${prismArgs.join(" ")}`);
  const prism = spawn(path.join(projectRoot, "node_modules", ".bin", "prism"), prismArgs, { cwd: projectRoot, stdio: "inherit" });
  let prismGone = false;
  prism.on("exit", (code, signal) => {
    prismGone = true;
    process.exit(code ?? (signal === null ? 1 : 128));
  });
  // Stopping the mock stops Prism with it.
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => prism.kill(signal));
  const prismUrl = `http://127.0.0.1:${prismPort}`;
  try {
    // A path of the contract, with a token: Prism prints every request, and
    // a path off the contract would open the mock's output with an error.
    await untilAnswering(`${prismUrl}/agents`, { what: "Prism's mock", timeoutMs: 60_000, abortIf: () => (prismGone ? "exited before answering" : null) }, { "X-Auth-Token": "start" });
    const front = await startFrontDoor({
      host,
      port,
      prism: prismUrl,
      upstream: null,
      delayMs,
      bodyLimitBytes: loaded.config.bodyLimitBytes,
      // No state to put back: a test suite's reset works against either mock.
      reset: () => Promise.resolve(),
    });
    console.error(
      `agentd stateless mock on ${front.url}: call this address; Prism's mock behind it, on ${prismUrl} (the address Prism printed above), is internal` +
        (delayMs === 0 ? "" : `; every answer delayed ${delayMs} ms`),
    );
    // A release before tokens (15.18 and older) takes none.
    const withToken = (load(readFileSync(spec, "utf8")) as { components?: { securitySchemes?: object } }).components?.securitySchemes !== undefined;
    console.error(`  try:     curl ${withToken ? "-H 'X-Auth-Token: any' " : ""}${front.url}/agents`);
  } catch (err) {
    console.error(`npm run mock: the mock could not start: ${(err as Error).message}`);
    prism.kill("SIGTERM");
    process.exit(1);
  }
}

async function stateful(release: string | undefined): Promise<void> {
  if (release !== undefined) {
    refuse(
      `--stateful runs the service's current code, which answers as openapi.yaml does, not as ${release} did; ` +
        `for a client of ${release}, use the stateless mock: npm run mock -- --release ${release}`,
    );
  }
  let options;
  try {
    options = parseArgs({
      args: args.filter((arg) => arg !== "--stateful"),
      options: {
        agents: { type: "string" },
        delay: { type: "string" },
        host: { type: "string", short: "h", default: "127.0.0.1" },
        port: { type: "string", short: "p", default: "4010" },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    refuse(`${(err as Error).message} (--stateful takes --agents, --delay, --host and --port)`);
  }
  if (!LOOPBACK_HOSTS.includes(options.host)) {
    refuse(`--host ${options.host}: the stateful mock accepts any token, so it listens on loopback only (${LOOPBACK_HOSTS.join(", ")})`);
  }
  const port = Number(options.port);
  if (!/^\d+$/.test(options.port) || port > 65_535) refuse(`--port ${options.port}: must be a port number from 0 to 65535`);
  let fleet = exampleFleet(CONTRACT);
  if (options.agents !== undefined) {
    try {
      fleet = sizedFleet(fleet, /^\d+$/.test(options.agents) ? Number(options.agents) : NaN);
    } catch (err) {
      refuse(`--agents ${options.agents}: ${(err as Error).message}`);
    }
  }
  const delayMs = options.delay === undefined ? 0 : delayOption(options.delay);
  if (process.env.AGENTD_DATABASE_URL) {
    refuse("AGENTD_DATABASE_URL is set: the stateful mock holds its state in memory and never opens a real database; unset it for the mock");
  }
  const env = { ...process.env };
  let generatedSecret: string | null = null;
  if (env.AGENTD_WEBHOOK_URLS && !env.AGENTD_WEBHOOK_SECRET) env.AGENTD_WEBHOOK_SECRET = generatedSecret = generateWebhookSecret();
  const loaded = loadConfig(env);
  if (!loaded.ok) refuse(`the environment's AGENTD_* settings are not valid:\n${loaded.errors.join("\n")}`);
  const { events } = loaded.config;

  let mock;
  try {
    mock = await startStatefulMock({ host: options.host, port, fleet, delayMs, config: loaded.config, projectRoot });
  } catch (err) {
    console.error(`npm run mock: the stateful mock could not start: ${(err as Error).message}`);
    process.exit(1);
  }
  const sinks = sinkSummaries(events);
  console.log(
    [
      `agentd stateful mock on ${mock.url}: Prism validating every request against openapi.yaml, the service's own code behind it`,
      `  try:     curl -H 'X-Auth-Token: any' ${mock.url}/agents`,
      `  tokens:  any non-empty X-Auth-Token, with every permission; none gets 401`,
      `  agents:  ${fleet.agents.length}${options.agents === undefined ? " (the contract's AgentList example)" : ""}, in memory: every start is fresh`,
      `  events:  ${sinks.length === 0 ? "none (set AGENTD_WEBHOOK_URLS and/or AGENTD_BUS_URL)" : sinks.join("; ")}`,
      ...(events.webhookUrls.length > 0 ? [`  secret:  ${events.webhookSecret}${generatedSecret === null ? " (AGENTD_WEBHOOK_SECRET)" : " (generated for this start)"}`] : []),
      `  delay:   ${delayMs === 0 ? "none" : `${delayMs} ms`} (--delay for every answer, Prefer: delay=<ms> for one)`,
      `  reset:   curl -X POST ${mock.url}${RESET_PATH} puts every agent back as at start and drops undelivered events`,
      `  forced:  Prefer: code=<status>, example=<name> or dynamic=true answers from the contract's examples (or random bodies), and changes nothing`,
    ].join("\n"),
  );
  let stopping = false;
  // Without Prism nothing answers: stop rather than serve errors.
  void mock.prismExited.then(async (log) => {
    if (stopping) return;
    console.error(`npm run mock: Prism exited; stopping the mock.\n${log}`);
    stopping = true;
    await mock.close();
    process.exit(1);
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      void mock.close().then(() => process.exit(0));
    });
  }
}

const release = takeRelease();
if (args.includes("--stateful")) await stateful(release);
else await stateless(release);
