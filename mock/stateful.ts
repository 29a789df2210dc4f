// The stateful mock, `npm run mock -- --stateful`: three layers on loopback.
//
//   client ─▶ front door (--host:--port)  delays, the contract's error body
//          ─▶ Prism proxy                 validates every request, CORS, Prefer
//          ─▶ the service's own code      state, rules, events (upstream.ts)
//
// Prism stays the front door of the contract: it checks each request
// against openapi.yaml (naming violations in `sl-violations`), answers CORS,
// and mocks any answer forced with `Prefer`. The state lives in memory:
// each start is fresh, and so is the state after `POST /__mock/reset`.
import { randomBytes } from "node:crypto";
import { spawn } from "node:child_process";
import path from "node:path";
import { pino } from "pino";
import { untilAnswering } from "../devkit/poll.js";
import { freePort } from "../devkit/ports.js";
import type { Config } from "../server/config/config.js";
import { CONTRACT_PATH } from "../server/contract.js";
import type { Fleet } from "./fleet.js";
import { startFrontDoor, type FrontDoor } from "./front-door.js";
import { startMockUpstream, type MockUpstream } from "./upstream.js";

/** Hosts the stateful mock may listen on: it accepts any token, so never beyond this machine. */
export const LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1"];

export interface StatefulMockOptions {
  host: string;
  port: number;
  /** The agents it starts with (fleet.ts). */
  fleet: Fleet;
  delayMs: number;
  /** The server's configuration, for its events (webhooks, bus) and limits. */
  config: Config;
  /** Where Prism is installed: the project's root. */
  projectRoot: string;
}

export interface StatefulMock {
  url: string;
  /** Resolves, with what Prism said last, when Prism exits: unless the mock is closing, it cannot answer any more. */
  prismExited: Promise<string>;
  close(): Promise<void>;
}

/** A Standard Webhooks secret, for when webhooks are configured without one. */
export const generateWebhookSecret = (): string => `whsec_${randomBytes(32).toString("base64")}`;

export async function startStatefulMock(options: StatefulMockOptions): Promise<StatefulMock> {
  const { fleet } = options;
  // The service's own log goes to standard error, warnings only: a failed delivery shows.
  const logger = pino({ level: "warn" }, pino.destination(2));
  let upstream: MockUpstream | undefined;
  let prism: PrismProxy | undefined;
  let front: FrontDoor | undefined;
  const close = async (): Promise<void> => {
    await front?.close();
    await prism?.stop();
    await upstream?.close();
  };
  try {
    const service = await startMockUpstream(options.config, fleet, logger);
    upstream = service;
    prism = await startPrismProxy(options.projectRoot, upstream.url);
    front = await startFrontDoor({
      host: options.host,
      port: options.port,
      prism: prism.url,
      upstream: upstream.url,
      reset: () => service.reset(),
      delayMs: options.delayMs,
      bodyLimitBytes: options.config.bodyLimitBytes,
    });
  } catch (err) {
    await close();
    throw err;
  }
  return { url: front.url, prismExited: prism.exited, close };
}

interface PrismProxy {
  url: string;
  /** Resolves with Prism's last words when it exits, whoever stopped it. */
  exited: Promise<string>;
  stop(): Promise<void>;
}

async function startPrismProxy(projectRoot: string, upstream: string): Promise<PrismProxy> {
  const port = await freePort();
  const bin = path.join(projectRoot, "node_modules", ".bin", "prism");
  const args = ["proxy", CONTRACT_PATH, upstream, "--host", "127.0.0.1", "--port", String(port)];
  // In the mock's own process group, so a Ctrl-C in the terminal reaches it too.
  const child = spawn(bin, args, { cwd: projectRoot, stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
  let log = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (log = (log + chunk).slice(-4000)));
  let gone = false;
  const exited = new Promise<void>((resolve) =>
    child.once("exit", () => {
      gone = true;
      resolve();
    }),
  );
  const stop = async (): Promise<void> => {
    if (gone) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 3_000);
    await exited;
    clearTimeout(timer);
  };
  const url = `http://127.0.0.1:${port}`;
  try {
    await untilAnswering(`${url}/`, { what: "Prism's proxy", timeoutMs: 60_000, abortIf: () => (gone ? `exited before answering:\n${log}` : null) });
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, exited: exited.then(() => log), stop };
}
