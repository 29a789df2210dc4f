import type { LogLevel } from "./variables.js";

/** Everything the server can be configured with. Read only from the environment (see config/load.ts). */
export interface Config {
  host: string;
  port: number;
  /** Folder for the embedded database, the generated certificate and the admin socket. */
  dataDir: string;
  /** When set, state lives in this PostgreSQL database instead of the embedded one. */
  databaseUrl: string | null;
  tlsCert: string | null;
  tlsKey: string | null;
  /** Overrides the deployment UUID stored in the database. */
  originUuid: string | null;
  /** When set, this token is made sure to exist with ACL `agentd.#`. */
  adminToken: string | null;
  /** When set, tokens are checked by this wazo-auth compatible service instead of the database. */
  authUrl: string | null;
  authTimeoutMs: number;
  authCacheTtlMs: number;
  authCacheSize: number;
  /** Validate responses against the contract too (on in tests, off by default). */
  validateResponses: boolean;
  bodyLimitBytes: number;
  /** null: rate limiting disabled. */
  rateLimit: { perSecond: number; burst: number } | null;
  corsOrigins: string[];
  /** A connection still without a completed TLS handshake after this long is closed. */
  tlsHandshakeTimeoutMs: number;
  /** Upper bound on one database round trip before the request answers 503. */
  dbTimeoutMs: number;
  /** How long a graceful shutdown waits for in-flight requests. */
  shutdownTimeoutMs: number;
  /** The operator listener (health, readiness, metrics); port null: disabled. */
  opsHost: string;
  opsPort: number | null;
  /** How long a stop keeps serving with /readyz at 503 before it stops accepting connections. */
  drainDelayMs: number;
  logLevel: LogLevel;
  /** Most log output held in memory for a slow or stuck reader of standard output. */
  logBufferBytes: number;
  /** Where the events go (server/events/); no sink: no event is recorded. */
  events: EventsConfig;
}

export interface EventsConfig {
  /** RabbitMQ URL; null: no bus. */
  busUrl: string | null;
  busExchange: string;
  webhookUrls: string[];
  /** Set whenever webhookUrls is not empty. */
  webhookSecret: string | null;
  webhookTimeoutMs: number;
  retryMinMs: number;
  retryMaxMs: number;
  pollMs: number;
}
