// Every environment variable the server reads, each defined once: its name,
// its default, its documentation and its parser (parsers.ts). The loader
// (load.ts) and the `Config` type (config.ts) follow this list, and the
// README check, `agentd serve --help` and `.env.example` (env-docs.ts) all
// show it, so a variable cannot be documented with one default and parsed
// with another, nor read into a field the type does not have.
import {
  amqpUrl,
  authUrl,
  boolean,
  duration,
  exchangeName,
  filePath,
  hostName,
  integer,
  logLevel,
  origins,
  portOrOff,
  postgresUrl,
  size,
  token,
  uuid,
  webhookSecret,
  webhookUrls,
} from "./parsers.js";

interface Definition<T> {
  name: `AGENTD_${string}`;
  /** How the default is shown when it is not a literal value (AGENTD_RATE_BURST's depends on another variable). */
  shownDefault?: string;
  description: string;
  /** A secret's value (token, URL with a password) is never echoed back in an error. */
  secret?: boolean;
  /** Throws an Error whose message says what the value must be. `cwd` resolves relative paths. */
  parse(raw: string, cwd: string): T;
}

/**
 * A variable and the value it has when unset: its `default` as it would be
 * written in the environment, parsed like any value; or, without one
 * (default null), its `unset` value (null, or [] for a list).
 */
export type Variable<T> = Definition<T> & ({ default: string; unset?: never } | { default: null; unset: T });

const variable = <T>(definition: Variable<T>): Variable<T> => definition;

/**
 * Keyed by the name of the value in `Config`; the events' variables (busUrl
 * to pollMs) go to `Config.events`, rateLimit with rateBurst make
 * `Config.rateLimit`, and authCheckRate with authCheckBurst `Config.authCheckLimit`.
 */
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
    description: "Folder for the embedded database, the generated certificate, the admin socket and the server's code cache.",
    parse: filePath,
  }),
  databaseUrl: variable({
    name: "AGENTD_DATABASE_URL",
    default: null,
    unset: null,
    description: "postgres:// or postgresql:// URL; when unset, state lives in an embedded PGlite database in AGENTD_DATA_DIR.",
    secret: true,
    parse: postgresUrl,
  }),
  tlsCert: variable({
    name: "AGENTD_TLS_CERT",
    default: null,
    unset: null,
    description:
      "PEM certificate file: the server's certificate, then its intermediates (the server sends exactly this chain); set together with AGENTD_TLS_KEY. When both are unset a self-signed certificate for localhost is generated into AGENTD_DATA_DIR/tls.",
    parse: filePath,
  }),
  tlsKey: variable({
    name: "AGENTD_TLS_KEY",
    default: null,
    unset: null,
    description: "PEM private key file for AGENTD_TLS_CERT.",
    parse: filePath,
  }),
  originUuid: variable({
    name: "AGENTD_ORIGIN_UUID",
    default: null,
    unset: null,
    description: "Deployment UUID reported as origin_uuid; by default one is generated once and stored in the database.",
    parse: uuid,
  }),
  adminToken: variable({
    name: "AGENTD_ADMIN_TOKEN",
    default: null,
    unset: null,
    description: "At least 16 printable characters, random as the tokens agentd makes are (openssl rand -base64 32): the API does not slow down a client guessing tokens; made sure to exist with ACL agentd.# (embedded tokens, for scripted deployments); a new value revokes the token of the previous one.",
    secret: true,
    parse: token,
  }),
  authUrl: variable({
    name: "AGENTD_AUTH_URL",
    default: null,
    unset: null,
    description: "http(s) URL of a wazo-auth compatible service, without a user name or password; when set, tokens are checked there instead of in the database.",
    parse: authUrl,
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
  authCheckRate: variable({
    name: "AGENTD_AUTH_CHECK_RATE",
    default: "100",
    description:
      "Checks per second this instance may send to the external auth service for tokens its cache cannot answer, whoever sends them, and as many again for tokens the service has granted something before; 0: no cap. Past it a request that needs a check answers 429 with Retry-After at once: a flood of made-up tokens never becomes a flood of checks.",
    parse: (raw) => integer(raw, 0, 1_000_000),
  }),
  authCheckBurst: variable({
    name: "AGENTD_AUTH_CHECK_BURST",
    default: null,
    unset: null,
    shownDefault: "2 × AGENTD_AUTH_CHECK_RATE, at least 100 (200)",
    description: "Checks that may be sent at once before AGENTD_AUTH_CHECK_RATE applies; at least AGENTD_AUTH_CHECK_RATE.",
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
      "Requests per second allowed per valid token; per client address (an IPv6 /64) and token for a token not yet known to be valid; per client address for requests without a token. 0 disables rate limiting. Past it the request answers 429 with Retry-After.",
    parse: (raw) => integer(raw, 0, 1_000_000),
  }),
  rateBurst: variable({
    name: "AGENTD_RATE_BURST",
    default: null,
    unset: null,
    shownDefault: "2 × AGENTD_RATE_LIMIT (200)",
    description: "Requests that may be sent at once against one of those budgets before the rate applies; at least AGENTD_RATE_LIMIT.",
    parse: (raw) => integer(raw, 1, 10_000_000),
  }),
  corsOrigins: variable({
    name: "AGENTD_CORS_ORIGINS",
    default: null,
    unset: [],
    description: "Comma-separated browser origins allowed by CORS (e.g. https://app.example.com), or * for any; none by default.",
    parse: origins,
  }),
  tlsHandshakeTimeoutMs: variable({
    name: "AGENTD_TLS_HANDSHAKE_TIMEOUT",
    default: "10s",
    description: "A connection that has not completed its TLS handshake within this time is closed.",
    parse: (raw) => duration(raw, 1),
  }),
  idleTimeoutMs: variable({
    name: "AGENTD_IDLE_TIMEOUT",
    default: "30s",
    description:
      "A connection with no request in progress is closed after this long: one that sends nothing after its TLS handshake, or a keep-alive one between requests (which also closes after 5 s, if that is shorter). So is one whose client takes in nothing of a large answer (the agent list of a large fleet) for this long, twice over as Node counts it on TLS; the kernel takes such an answer in bursts of up to half its send buffer (a few MB), so a client reading slower than one burst per that time is cut off too.",
    parse: (raw) => duration(raw, 1),
  }),
  maxConnections: variable({
    name: "AGENTD_MAX_CONNECTIONS",
    default: null,
    unset: null,
    shownDefault: "the hard open-file limit (ulimit -Hn) less 256",
    description:
      "Most API connections open at once; past it a new connection is closed at once. The rest of the open-file limit stays free for the database, the relay, the log and the operator listener: the server refuses to start if this leaves fewer than 256.",
    parse: (raw) => integer(raw, 1, 10_000_000),
  }),
  dbTimeoutMs: variable({
    name: "AGENTD_DB_TIMEOUT",
    default: "5s",
    description:
      "Upper bound on one round trip to PostgreSQL, and on the readiness check of either database; past it the request answers 503. PostgreSQL cancels a slower statement itself; one on a database that has stopped answering altogether is given up a second later, so that the server's cancel, which keeps the connection, comes first. The embedded database's statements are not bounded by it (PGlite cannot cancel one): see AGENTD_DB_STALL_TIMEOUT.",
    parse: (raw) => duration(raw, 1),
  }),
  dbStallTimeoutMs: variable({
    name: "AGENTD_DB_STALL_TIMEOUT",
    default: "2m",
    description:
      "Embedded database only: how long PGlite may owe answers without giving any before the server takes it for stuck, stops, and exits 1 for a supervisor to start it again (the start recovers the data directory as after a crash). PGlite cannot interrupt a statement, and a write to its write-ahead log that fails for want of space leaves it busy for good. Keep it above its longest statement: the start's read of the whole fleet, an import.",
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
    description: "Port of the operator listener, 0 to 65535 (0 picks a free port; never AGENTD_PORT's), or off to disable it (and metrics).",
    parse: portOrOff,
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
    unset: null,
    description:
      "amqp:// or amqps:// URL of the RabbitMQ bus the events agent_paused and agent_unpaused are published on (e.g. amqp://guest:guest@127.0.0.1:5672); unset: no bus.",
    secret: true,
    parse: amqpUrl,
  }),
  busExchange: variable({
    name: "AGENTD_BUS_EXCHANGE",
    default: "xivo",
    description: "Durable topic exchange the events are published to (declared if missing), as upstream's bus.",
    parse: exchangeName,
  }),
  webhookUrls: variable({
    name: "AGENTD_WEBHOOK_URLS",
    default: null,
    unset: [],
    description:
      "Comma-separated http(s) URLs each event is POSTed to, signed (Standard Webhooks), without a user name or password; each is one receiver however it is written (compared as the URL standard writes it; a trailing slash is another URL); unset: no webhooks.",
    secret: true,
    parse: webhookUrls,
  }),
  webhookSecret: variable({
    name: "AGENTD_WEBHOOK_SECRET",
    default: null,
    unset: null,
    description: "Standard Webhooks signing secret (whsec_ followed by base64, at least 24 bytes; the whsec_ may be left out); required with AGENTD_WEBHOOK_URLS. Several, separated by spaces, sign every delivery with each, to replace one without a gap.",
    secret: true,
    parse: webhookSecret,
  }),
  webhookTimeoutMs: variable({
    name: "AGENTD_WEBHOOK_TIMEOUT",
    default: "5s",
    description: "Time-out of one webhook delivery; past it the delivery counts as failed and is retried.",
    parse: (raw) => duration(raw, 1),
  }),
  retryMinMs: variable({
    name: "AGENTD_EVENT_RETRY_MIN",
    default: "1s",
    description: "Wait before the first retry of a failed event delivery (bus or webhook); each further retry waits twice as long.",
    parse: (raw) => duration(raw, 1),
  }),
  retryMaxMs: variable({
    name: "AGENTD_EVENT_RETRY_MAX",
    default: "1m",
    description: "Longest wait between retries of a failed event delivery; at least AGENTD_EVENT_RETRY_MIN.",
    parse: (raw) => duration(raw, 1),
  }),
  pollMs: variable({
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
    parse: logLevel,
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
