// Every environment variable the server reads, each defined once: its name,
// its default, its documentation and its parser. The loader (load.ts), the
// README check, `agentd serve --help` and `.env.example` all read this list,
// so a variable cannot be documented with one default and parsed with another.
import { resolve } from "node:path";
import bytes from "bytes";
import ms from "ms";

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Variable<T> {
  name: `AGENTD_${string}`;
  /**
   * The default as it would be written in the environment, parsed like any
   * value; null: unset by default (the value is then null).
   */
  default: string | null;
  /** How the default is shown when it is not a literal value (AGENTD_RATE_BURST's depends on another variable). */
  shownDefault?: string;
  description: string;
  /** A secret's value (token, URL with a password) is never echoed back in an error. */
  secret?: boolean;
  /** Throws an Error whose message says what the value must be. `cwd` resolves relative paths. */
  parse(raw: string, cwd: string): T;
}

const variable = <T>(definition: Variable<T>): Variable<T> => definition;

/** setTimeout's ceiling: a longer delay would silently fire at once. */
const MAX_DURATION_MS = 2 ** 31 - 1;

export const VARIABLES = {
  host: variable({
    name: "AGENTD_HOST",
    default: "127.0.0.1",
    description: "Address to listen on (HTTPS only).",
    parse: hostName,
  }),
  port: variable({
    name: "AGENTD_PORT",
    default: "9493",
    description: "Port to listen on, 0 to 65535 (0 picks a free port).",
    parse: (raw) => integer(raw, 0, 65535),
  }),
  dataDir: variable({
    name: "AGENTD_DATA_DIR",
    default: "./data",
    description: "Folder for the embedded database, the generated certificate and the admin socket.",
    parse: (raw, cwd) => resolve(cwd, raw),
  }),
  databaseUrl: variable({
    name: "AGENTD_DATABASE_URL",
    default: null,
    description: "postgres:// or postgresql:// URL; when unset, state lives in an embedded PGlite database in AGENTD_DATA_DIR.",
    secret: true,
    parse: (raw) => {
      // An empty host is fine here: pg then takes it from ?host= (Unix socket) or PGHOST.
      url(raw, ["postgres:", "postgresql:"], false);
      return raw;
    },
  }),
  tlsCert: variable({
    name: "AGENTD_TLS_CERT",
    default: null,
    description:
      "PEM certificate file; set together with AGENTD_TLS_KEY. When both are unset a self-signed certificate for localhost is generated into AGENTD_DATA_DIR/tls.",
    parse: (raw, cwd) => resolve(cwd, raw),
  }),
  tlsKey: variable({
    name: "AGENTD_TLS_KEY",
    default: null,
    description: "PEM private key file for AGENTD_TLS_CERT.",
    parse: (raw, cwd) => resolve(cwd, raw),
  }),
  originUuid: variable({
    name: "AGENTD_ORIGIN_UUID",
    default: null,
    description: "Deployment UUID reported as origin_uuid; by default one is generated once and stored in the database.",
    parse: (raw) => {
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(raw)) throw new Error("must be a UUID");
      return raw.toLowerCase();
    },
  }),
  adminToken: variable({
    name: "AGENTD_ADMIN_TOKEN",
    default: null,
    description: "At least 16 printable characters; made sure to exist with ACL agentd.# (embedded tokens, for scripted deployments).",
    secret: true,
    parse: (raw) => {
      // It travels in the X-Auth-Token header: printable ASCII without spaces only.
      if (raw.length < 16 || !/^[\x21-\x7e]+$/.test(raw)) {
        throw new Error("must be at least 16 printable ASCII characters without spaces");
      }
      return raw;
    },
  }),
  authUrl: variable({
    name: "AGENTD_AUTH_URL",
    default: null,
    description: "http(s) URL of a wazo-auth compatible service; when set, tokens are checked there instead of in the database.",
    parse: (raw) => {
      const parsed = url(raw, ["http:", "https:"], true);
      if (parsed.search !== "" || parsed.hash !== "") throw new Error("must not have a query or fragment");
      return parsed.href.replace(/\/+$/, "");
    },
  }),
  authTimeoutMs: variable({
    name: "AGENTD_AUTH_TIMEOUT",
    default: "2s",
    description: "Time-out of one check against AGENTD_AUTH_URL; past it the request answers 503.",
    parse: (raw) => duration(raw, 1),
  }),
  authCacheTtlMs: variable({
    name: "AGENTD_AUTH_CACHE_TTL",
    default: "10s",
    description:
      "How long a positive answer of AGENTD_AUTH_URL is reused for the same token and ACL; 0 disables the cache. Failures are never cached.",
    parse: (raw) => duration(raw, 0),
  }),
  authCacheSize: variable({
    name: "AGENTD_AUTH_CACHE_SIZE",
    default: "10000",
    description: "Maximum number of cached (token, ACL) answers.",
    parse: (raw) => integer(raw, 1, 10_000_000),
  }),
  validateResponses: variable({
    name: "AGENTD_VALIDATE_RESPONSES",
    default: "false",
    description: "true/false (or 1/0): also validate every response against openapi.yaml.",
    parse: boolean,
  }),
  bodyLimitBytes: variable({
    name: "AGENTD_BODY_LIMIT",
    default: "16kb",
    description: "Largest request body accepted (bytes, or with a unit: 16kb, 1mb); larger answers 413.",
    parse: (raw) => size(raw, 1, "16384, 16kb or 1mb"),
  }),
  rateLimit: variable({
    name: "AGENTD_RATE_LIMIT",
    default: "100",
    description:
      "Requests per second allowed per valid token, and per client address for requests whose token is not yet known to be valid; 0 disables rate limiting. Past it the request answers 429 with Retry-After.",
    parse: (raw) => integer(raw, 0, 1_000_000),
  }),
  rateBurst: variable({
    name: "AGENTD_RATE_BURST",
    default: null,
    shownDefault: "2 × AGENTD_RATE_LIMIT (200)",
    description: "Requests a token (or a client address) may send at once before the rate applies; at least AGENTD_RATE_LIMIT.",
    parse: (raw) => integer(raw, 1, 10_000_000),
  }),
  corsOrigins: variable({
    name: "AGENTD_CORS_ORIGINS",
    default: null,
    description: "Comma-separated browser origins allowed by CORS (e.g. https://app.example.com), or * for any; none by default.",
    parse: origins,
  }),
  tlsHandshakeTimeoutMs: variable({
    name: "AGENTD_TLS_HANDSHAKE_TIMEOUT",
    default: "10s",
    description: "A connection that has not completed its TLS handshake within this time is closed.",
    parse: (raw) => duration(raw, 1),
  }),
  dbTimeoutMs: variable({
    name: "AGENTD_DB_TIMEOUT",
    default: "5s",
    description: "Upper bound on one database round trip; past it the request answers 503.",
    parse: (raw) => duration(raw, 1),
  }),
  shutdownTimeoutMs: variable({
    name: "AGENTD_SHUTDOWN_TIMEOUT",
    default: "10s",
    description: "How long SIGTERM/SIGINT wait for in-flight requests before closing anyway.",
    parse: (raw) => duration(raw, 0),
  }),
  opsHost: variable({
    name: "AGENTD_OPS_HOST",
    default: "127.0.0.1",
    description: "Address of the operator listener (plain HTTP: /healthz, /readyz, /metrics); keep it on loopback or a private network.",
    parse: hostName,
  }),
  opsPort: variable({
    name: "AGENTD_OPS_PORT",
    default: "9494",
    description: "Port of the operator listener, 0 to 65535 (0 picks a free port), or off to disable it (and metrics).",
    parse: (raw): number | null => {
      if (raw.toLowerCase() === "off") return null;
      if (!/^\d+$/.test(raw) || Number(raw) > 65535) throw new Error("must be an integer from 0 to 65535, or off");
      return Number(raw);
    },
  }),
  drainDelayMs: variable({
    name: "AGENTD_DRAIN_DELAY",
    default: "5s",
    description:
      "On SIGTERM/SIGINT, how long /readyz answers 503 while the API still serves, so load balancers stop sending before connections are refused.",
    parse: (raw) => duration(raw, 0),
  }),
  busUrl: variable({
    name: "AGENTD_BUS_URL",
    default: null,
    description:
      "amqp:// or amqps:// URL of the RabbitMQ bus the events agent_paused and agent_unpaused are published on (e.g. amqp://guest:guest@127.0.0.1:5672); unset: no bus.",
    secret: true,
    parse: (raw) => {
      url(raw, ["amqp:", "amqps:"], true);
      return raw;
    },
  }),
  busExchange: variable({
    name: "AGENTD_BUS_EXCHANGE",
    default: "xivo",
    description: "Durable topic exchange the events are published to (declared if missing), as upstream's bus.",
    parse: (raw) => {
      if (!/^[A-Za-z0-9_.:-]{1,127}$/.test(raw)) throw new Error("must be an AMQP exchange name (letters, digits, - _ . :)");
      return raw;
    },
  }),
  webhookUrls: variable({
    name: "AGENTD_WEBHOOK_URLS",
    default: null,
    description: "Comma-separated http(s) URLs each event is POSTed to, signed (Standard Webhooks), without a user name or password; unset: no webhooks.",
    secret: true,
    parse: (raw) => {
      const list = [...new Set(raw.split(",").map((u) => u.trim()).filter((u) => u !== ""))];
      for (const item of list) {
        // A user name or password in the URL would never reach the receiver
        // (undici sends no Authorization from it), which answers 401 forever:
        // receivers check the signature instead.
        const parsed = url(item, ["http:", "https:"], true);
        if (parsed.username !== "" || parsed.password !== "") throw new Error("must not carry a user name or password: receivers check the webhook signature");
      }
      if (list.length === 0) throw new Error("must list at least one http:// or https:// URL");
      return list;
    },
  }),
  webhookSecret: variable({
    name: "AGENTD_WEBHOOK_SECRET",
    default: null,
    description: "Standard Webhooks signing secret (whsec_ followed by base64, at least 24 bytes); required with AGENTD_WEBHOOK_URLS.",
    secret: true,
    parse: (raw) => {
      const key = Buffer.from(raw.replace(/^whsec_/, ""), "base64");
      if (!/^(whsec_)?[A-Za-z0-9+/]+={0,2}$/.test(raw) || key.length < 24) throw new Error("must be whsec_ followed by at least 24 bytes in base64");
      return raw;
    },
  }),
  webhookTimeoutMs: variable({
    name: "AGENTD_WEBHOOK_TIMEOUT",
    default: "5s",
    description: "Time-out of one webhook delivery; past it the delivery counts as failed and is retried.",
    parse: (raw) => duration(raw, 1),
  }),
  eventRetryMinMs: variable({
    name: "AGENTD_EVENT_RETRY_MIN",
    default: "1s",
    description: "Wait before the first retry of a failed event delivery (bus or webhook); each further retry waits twice as long.",
    parse: (raw) => duration(raw, 1),
  }),
  eventRetryMaxMs: variable({
    name: "AGENTD_EVENT_RETRY_MAX",
    default: "1m",
    description: "Longest wait between retries of a failed event delivery; at least AGENTD_EVENT_RETRY_MIN.",
    parse: (raw) => duration(raw, 1),
  }),
  eventPollMs: variable({
    name: "AGENTD_EVENT_POLL_INTERVAL",
    default: "500ms",
    description:
      "How often the relay looks for events to deliver that another instance recorded, or that wait for a retry (an instance delivers its own at once).",
    parse: (raw) => duration(raw, 1),
  }),
  logLevel: variable({
    name: "AGENTD_LOG_LEVEL",
    default: "info",
    description: "fatal, error, warn, info, debug, trace or silent.",
    parse: (raw): LogLevel => {
      const level = LOG_LEVELS.find((l) => l === raw.toLowerCase());
      if (level === undefined) throw new Error(`must be one of ${LOG_LEVELS.join(", ")}`);
      return level;
    },
  }),
  logBufferBytes: variable({
    name: "AGENTD_LOG_BUFFER",
    default: "4mb",
    description:
      "Most log output held in memory while standard output is not read (bytes, or with a unit: 512kb, 4mb; at least 16kb). Lines beyond it are dropped and counted, with a warning when dropping starts and one with the total when it stops.",
    parse: (raw) => size(raw, 16 * 1024, "512kb or 4mb, at least 16kb"),
  }),
};

export type Variables = typeof VARIABLES;

/** The variables in documentation order. */
export const VARIABLE_LIST: readonly Variable<unknown>[] = Object.values(VARIABLES);

/** The default as the README, --help and .env.example show it. */
export function shownDefault(v: Variable<unknown>): string | null {
  return v.shownDefault ?? v.default;
}

/** `.env.example`: every variable, commented out at its default, with its description. */
export function renderEnvExample(): string {
  const blocks = VARIABLE_LIST.map((v) => {
    const shown = shownDefault(v);
    const note = v.default === null && shown !== null ? ` (default: ${shown})` : "";
    return `# ${v.description}${note}\n# ${v.name}=${v.default ?? ""}\n`;
  });
  return (
    "# agentd configuration: copy to .env and uncomment what you change.\n" +
    "# Generated from server/config/variables.ts by `npm run generate`; do not edit by hand.\n\n" +
    blocks.join("\n")
  );
}

/** The `agentd serve --help` section listing every variable. */
export function renderEnvHelp(): string {
  const lines = VARIABLE_LIST.map((v) => {
    const shown = shownDefault(v);
    return `  ${v.name}${shown === null ? "" : ` (default: ${shown})`}\n      ${v.description}`;
  });
  return `Environment variables (also read from ./.env):\n${lines.join("\n")}\n`;
}

function size(raw: string, min: number, examples: string): number {
  const value = bytes.parse(raw);
  if (value === null || !Number.isSafeInteger(value) || value < min || !/^\d+(\.\d+)?\s*([kmgtp]?b)?$/i.test(raw)) {
    throw new Error(`must be a size in bytes like ${examples}`);
  }
  return value;
}

function hostName(raw: string): string {
  if (/\s/.test(raw)) throw new Error("must be a host name or IP address");
  return raw;
}

function integer(raw: string, min: number, max: number): number {
  const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= min && value <= max)) throw new Error(`must be an integer from ${min} to ${max}`);
  return value;
}

function boolean(raw: string): boolean {
  switch (raw.toLowerCase()) {
    case "true":
    case "1":
      return true;
    case "false":
    case "0":
      return false;
    default:
      throw new Error("must be true, false, 1 or 0");
  }
}

/** `500ms`, `2s`, `1m` (anything `ms` understands) or a bare number of milliseconds. */
function duration(raw: string, min: number): number {
  let value: number | undefined;
  try {
    value = ms(raw as ms.StringValue);
  } catch {
    value = undefined;
  }
  if (value === undefined || !Number.isFinite(value) || value < min || value > MAX_DURATION_MS) {
    throw new Error(`must be a duration like 500ms, 2s or 1m${min > 0 ? " greater than 0" : ""}`);
  }
  return Math.round(value);
}

function url(raw: string, protocols: readonly string[], needsHost: boolean): URL {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new Error(`must be a ${protocols.map((p) => `${p}//`).join(" or ")} URL`);
  }
  if (!protocols.includes(parsed.protocol) || (needsHost && parsed.hostname === "")) {
    throw new Error(`must be a ${protocols.map((p) => `${p}//`).join(" or ")} URL`);
  }
  return parsed;
}

function origins(raw: string): string[] {
  const list = raw
    .split(",")
    .map((o) => o.trim())
    .filter((o) => o !== "");
  if (list.includes("*")) {
    if (list.length > 1) throw new Error("* allows every origin and cannot be combined with others");
    return ["*"];
  }
  for (const origin of list) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined || !["http:", "https:"].includes(parsed.protocol) || parsed.origin !== origin) {
      throw new Error(
        `${JSON.stringify(origin)} is not an origin like https://app.example.com (scheme, host and optional port, no path or trailing slash)`,
      );
    }
  }
  return list;
}
