import { join, resolve } from "node:path";
import bytes from "bytes";
import dotenv from "dotenv";
import ms from "ms";
import type { Config } from "./config.js";

export type LoadConfigResult = { ok: true; config: Config } | { ok: false; errors: string[] };

/** One documented environment variable, for `--help`, the start-up banner and the README. */
export interface EnvDoc {
  name: string;
  /** Shown as is; null when unset by default. */
  default: string | null;
  description: string;
}

export const ENV_DOCS: readonly EnvDoc[] = [
  { name: "AGENTD_HOST", default: "127.0.0.1", description: "Address to listen on (HTTPS only)." },
  { name: "AGENTD_PORT", default: "9493", description: "Port to listen on, 0 to 65535 (0 picks a free port)." },
  {
    name: "AGENTD_DATA_DIR",
    default: "./data",
    description: "Folder for the embedded database, the generated certificate and the admin socket.",
  },
  {
    name: "AGENTD_DATABASE_URL",
    default: null,
    description: "postgres:// or postgresql:// URL; when unset, state lives in an embedded PGlite database in AGENTD_DATA_DIR.",
  },
  {
    name: "AGENTD_TLS_CERT",
    default: null,
    description: "PEM certificate file; set together with AGENTD_TLS_KEY. When both are unset a self-signed certificate for localhost is generated into AGENTD_DATA_DIR/tls.",
  },
  { name: "AGENTD_TLS_KEY", default: null, description: "PEM private key file for AGENTD_TLS_CERT." },
  {
    name: "AGENTD_ORIGIN_UUID",
    default: null,
    description: "Deployment UUID reported as origin_uuid; by default one is generated once and stored in the database.",
  },
  {
    name: "AGENTD_ADMIN_TOKEN",
    default: null,
    description: "At least 16 printable characters; made sure to exist with ACL agentd.# (embedded tokens, for scripted deployments).",
  },
  {
    name: "AGENTD_AUTH_URL",
    default: null,
    description: "http(s) URL of a wazo-auth compatible service; when set, tokens are checked there instead of in the database.",
  },
  { name: "AGENTD_AUTH_TIMEOUT", default: "2s", description: "Time-out of one check against AGENTD_AUTH_URL; past it the request answers 503." },
  {
    name: "AGENTD_AUTH_CACHE_TTL",
    default: "10s",
    description: "How long a positive answer of AGENTD_AUTH_URL is reused for the same token and ACL; 0 disables the cache. Failures are never cached.",
  },
  { name: "AGENTD_AUTH_CACHE_SIZE", default: "10000", description: "Maximum number of cached (token, ACL) answers." },
  {
    name: "AGENTD_VALIDATE_RESPONSES",
    default: "false",
    description: "true/false (or 1/0): also validate every response against openapi.yaml.",
  },
  { name: "AGENTD_BODY_LIMIT", default: "16kb", description: "Largest request body accepted (bytes, or with a unit: 16kb, 1mb); larger answers 413." },
  {
    name: "AGENTD_RATE_LIMIT",
    default: "100",
    description: "Requests per second allowed per token; 0 disables rate limiting. Past it the request answers 429 with Retry-After.",
  },
  {
    name: "AGENTD_RATE_BURST",
    default: "2 × AGENTD_RATE_LIMIT (200)",
    description: "Requests a token may send at once before the rate applies; at least AGENTD_RATE_LIMIT.",
  },
  {
    name: "AGENTD_CORS_ORIGINS",
    default: null,
    description: "Comma-separated browser origins allowed by CORS (e.g. https://app.example.com), or * for any; none by default.",
  },
  { name: "AGENTD_DB_TIMEOUT", default: "5s", description: "Upper bound on one database round trip; past it the request answers 503." },
  {
    name: "AGENTD_SHUTDOWN_TIMEOUT",
    default: "10s",
    description: "How long SIGTERM/SIGINT wait for in-flight requests before closing anyway.",
  },
  {
    name: "AGENTD_LOG_LEVEL",
    default: "info",
    description: "fatal, error, warn, info, debug, trace or silent.",
  },
  {
    name: "AGENTD_LOG_BUFFER",
    default: "4mb",
    description: "Most log output held in memory while standard output is not read (bytes, or with a unit: 512kb, 4mb; at least 16kb). Lines beyond it are dropped and counted, with a warning when dropping starts and one with the total when it stops.",
  },
];

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
/** setTimeout's ceiling: a longer delay would silently fire at once. */
const MAX_DURATION_MS = 2 ** 31 - 1;

/**
 * Reads and validates the whole configuration. Every bad variable is
 * reported (each message starts with its name), not only the first one.
 * An empty value counts as unset, as `.env` files and `docker -e X=` produce.
 */
export function loadConfig(env: NodeJS.ProcessEnv, cwd: string = process.cwd()): LoadConfigResult {
  const errors: string[] = [];
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === "" ? undefined : value;
  };
  /**
   * Runs one parser, recording its complaint under the variable's name.
   * A secret's value (token, URL with a password) is never echoed back.
   */
  function field<T>(name: string, fallback: T, parse: (raw: string) => T, secret = false): T {
    const raw = read(name);
    if (raw === undefined) return fallback;
    try {
      return parse(raw);
    } catch (error) {
      const got = secret ? ` (value not shown, ${raw.length} characters)` : `, got ${JSON.stringify(raw)}`;
      errors.push(`${name}: ${(error as Error).message}${got}`);
      return fallback;
    }
  }

  const host = field("AGENTD_HOST", "127.0.0.1", (raw) => {
    if (/\s/.test(raw)) throw new Error("must be a host name or IP address");
    return raw;
  });
  const port = field("AGENTD_PORT", 9493, (raw) => integer(raw, 0, 65535));
  const dataDir = resolve(cwd, field("AGENTD_DATA_DIR", "./data", (raw) => raw));
  const databaseUrl = field<string | null>(
    "AGENTD_DATABASE_URL",
    null,
    (raw) => {
      // An empty host is fine here: pg then takes it from ?host= (Unix socket) or PGHOST.
      url(raw, ["postgres:", "postgresql:"], false);
      return raw;
    },
    true,
  );
  const tlsCert = field<string | null>("AGENTD_TLS_CERT", null, (raw) => resolve(cwd, raw));
  const tlsKey = field<string | null>("AGENTD_TLS_KEY", null, (raw) => resolve(cwd, raw));
  if ((read("AGENTD_TLS_CERT") === undefined) !== (read("AGENTD_TLS_KEY") === undefined)) {
    const missing = read("AGENTD_TLS_CERT") === undefined ? "AGENTD_TLS_CERT" : "AGENTD_TLS_KEY";
    const other = missing === "AGENTD_TLS_CERT" ? "AGENTD_TLS_KEY" : "AGENTD_TLS_CERT";
    errors.push(`${missing}: must be set together with ${other} (or neither, for a generated self-signed certificate)`);
  }
  const originUuid = field<string | null>("AGENTD_ORIGIN_UUID", null, (raw) => {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(raw)) throw new Error("must be a UUID");
    return raw.toLowerCase();
  });
  const adminToken = field<string | null>(
    "AGENTD_ADMIN_TOKEN",
    null,
    (raw) => {
      // It travels in the X-Auth-Token header: printable ASCII without spaces only.
      if (raw.length < 16 || !/^[\x21-\x7e]+$/.test(raw)) {
        throw new Error("must be at least 16 printable ASCII characters without spaces");
      }
      return raw;
    },
    true,
  );

  const authUrl = field<string | null>(
    "AGENTD_AUTH_URL",
    null,
    (raw) => {
      const parsed = url(raw, ["http:", "https:"], true);
      if (parsed.search !== "" || parsed.hash !== "") throw new Error("must not have a query or fragment");
      return parsed.href.replace(/\/+$/, "");
    },
  );
  const authTimeoutMs = field("AGENTD_AUTH_TIMEOUT", 2000, (raw) => duration(raw, 1));
  const authCacheTtlMs = field("AGENTD_AUTH_CACHE_TTL", 10_000, (raw) => duration(raw, 0));
  const authCacheSize = field("AGENTD_AUTH_CACHE_SIZE", 10_000, (raw) => integer(raw, 1, 10_000_000));
  const validateResponses = field("AGENTD_VALIDATE_RESPONSES", false, boolean);
  const bodyLimitBytes = field("AGENTD_BODY_LIMIT", 16 * 1024, (raw) => size(raw, 1, "16384, 16kb or 1mb"));
  const rate = field("AGENTD_RATE_LIMIT", 100, (raw) => integer(raw, 0, 1_000_000));
  const burst = field("AGENTD_RATE_BURST", Math.max(1, rate * 2), (raw) => integer(raw, 1, 10_000_000));
  if (rate > 0 && burst < rate && read("AGENTD_RATE_BURST") !== undefined && !errors.some((e) => e.startsWith("AGENTD_RATE_BURST:"))) {
    errors.push(`AGENTD_RATE_BURST: must be at least AGENTD_RATE_LIMIT (${rate}), got ${JSON.stringify(read("AGENTD_RATE_BURST"))}`);
  }
  const corsOrigins = field<string[]>("AGENTD_CORS_ORIGINS", [], (raw) => {
    const origins = raw.split(",").map((o) => o.trim()).filter((o) => o !== "");
    if (origins.includes("*")) {
      if (origins.length > 1) throw new Error("* allows every origin and cannot be combined with others");
      return ["*"];
    }
    for (const origin of origins) {
      let parsed: URL | undefined;
      try {
        parsed = new URL(origin);
      } catch {}
      if (parsed === undefined || !["http:", "https:"].includes(parsed.protocol) || parsed.origin !== origin) {
        throw new Error(`${JSON.stringify(origin)} is not an origin like https://app.example.com (scheme, host and optional port, no path or trailing slash)`);
      }
    }
    return origins;
  });
  const dbTimeoutMs = field("AGENTD_DB_TIMEOUT", 5000, (raw) => duration(raw, 1));
  const shutdownTimeoutMs = field("AGENTD_SHUTDOWN_TIMEOUT", 10_000, (raw) => duration(raw, 0));
  const logLevel = field<Config["logLevel"]>("AGENTD_LOG_LEVEL", "info", (raw) => {
    const level = LOG_LEVELS.find((l) => l === raw.toLowerCase());
    if (level === undefined) throw new Error(`must be one of ${LOG_LEVELS.join(", ")}`);
    return level;
  });
  const logBufferBytes = field("AGENTD_LOG_BUFFER", 4 * 1024 * 1024, (raw) => size(raw, 16 * 1024, "512kb or 4mb, at least 16kb"));

  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    config: {
      host,
      port,
      dataDir,
      databaseUrl,
      tlsCert,
      tlsKey,
      originUuid,
      adminToken,
      authUrl,
      authTimeoutMs,
      authCacheTtlMs,
      authCacheSize,
      validateResponses,
      bodyLimitBytes,
      rateLimit: rate === 0 ? null : { perSecond: rate, burst },
      corsOrigins,
      dbTimeoutMs,
      shutdownTimeoutMs,
      logLevel,
      logBufferBytes,
    },
  };
}

/**
 * Loads `<cwd>/.env` into `env` without overriding variables that are
 * already set. Returns the file's path when one was read, null when there is none.
 */
export function loadDotEnv(cwd: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const path = join(cwd, ".env");
  const result = dotenv.config({ path, processEnv: env as Record<string, string | undefined>, override: false, quiet: true });
  if (result.error) {
    if ((result.error as { code?: unknown }).code === "ENOENT") return null;
    throw new Error(`cannot read ${path}: ${result.error.message}`);
  }
  return path;
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

/** A size in bytes, bare or with a unit (16kb, 1mb), of at least `min` bytes. */
function size(raw: string, min: number, examples: string): number {
  const value = bytes.parse(raw);
  if (value === null || !Number.isSafeInteger(value) || value < min || !/^\d+(\.\d+)?\s*([kmgtp]?b)?$/i.test(raw)) {
    throw new Error(`must be a size in bytes like ${examples}`);
  }
  return value;
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
