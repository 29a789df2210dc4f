import { join } from "node:path";
import dotenv from "dotenv";
import type { Config } from "./config.js";
import { VARIABLES, type Variable } from "./variables.js";

export type LoadConfigResult = { ok: true; config: Config } | { ok: false; errors: string[] };

/**
 * Reads and validates the whole configuration (the variables of
 * variables.ts). Every bad variable is reported (each message starts with
 * its name), not only the first one. An empty value counts as unset, as
 * `.env` files and `docker -e X=` produce.
 */
export function loadConfig(env: NodeJS.ProcessEnv, cwd: string = process.cwd()): LoadConfigResult {
  const errors: string[] = [];
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === "" ? undefined : value;
  };
  const isSet = (v: Variable<unknown>): boolean => read(v.name) !== undefined;

  /** The variable's value, or its default's; null when neither is set. A bad value is recorded and reads as null. */
  function optional<T>(v: Variable<T>): T | null {
    const raw = read(v.name);
    if (raw === undefined) return v.default === null ? null : v.parse(v.default, cwd);
    try {
      return v.parse(raw, cwd);
    } catch (error) {
      const got = v.secret ? ` (value not shown, ${raw.length} characters)` : `, got ${JSON.stringify(raw)}`;
      errors.push(`${v.name}: ${(error as Error).message}${got}`);
      return null;
    }
  }
  /** For variables with a default: a bad value is recorded and reads as the default. */
  function required<T>(v: Variable<T>): T {
    if (v.default === null) throw new Error(`${v.name} has no default`);
    return optional(v) ?? v.parse(v.default, cwd);
  }

  const V = VARIABLES;
  if (isSet(V.tlsCert) !== isSet(V.tlsKey)) {
    const [missing, other] = isSet(V.tlsCert) ? [V.tlsKey, V.tlsCert] : [V.tlsCert, V.tlsKey];
    errors.push(`${missing.name}: must be set together with ${other.name} (or neither, for a generated self-signed certificate)`);
  }
  const rate = required(V.rateLimit);
  const burst = optional(V.rateBurst);
  if (burst !== null && rate > 0 && burst < rate) {
    errors.push(`${V.rateBurst.name}: must be at least ${V.rateLimit.name} (${rate}), got ${JSON.stringify(read(V.rateBurst.name))}`);
  }

  const webhookUrls = optional(V.webhookUrls) ?? [];
  const webhookSecret = optional(V.webhookSecret);
  if (webhookUrls.length > 0 && webhookSecret === null && !isSet(V.webhookSecret)) {
    errors.push(`${V.webhookSecret.name}: must be set when ${V.webhookUrls.name} is`);
  }
  const retryMinMs = required(V.eventRetryMinMs);
  const retryMaxMs = required(V.eventRetryMaxMs);
  if (retryMaxMs < retryMinMs) errors.push(`${V.eventRetryMaxMs.name}: must be at least ${V.eventRetryMinMs.name} (${retryMinMs} ms)`);

  const config: Config = {
    host: required(V.host),
    port: required(V.port),
    dataDir: required(V.dataDir),
    databaseUrl: optional(V.databaseUrl),
    tlsCert: optional(V.tlsCert),
    tlsKey: optional(V.tlsKey),
    originUuid: optional(V.originUuid),
    adminToken: optional(V.adminToken),
    authUrl: optional(V.authUrl),
    authTimeoutMs: required(V.authTimeoutMs),
    authCacheTtlMs: required(V.authCacheTtlMs),
    authCacheSize: required(V.authCacheSize),
    validateResponses: required(V.validateResponses),
    bodyLimitBytes: required(V.bodyLimitBytes),
    rateLimit: rate === 0 ? null : { perSecond: rate, burst: burst ?? Math.max(1, rate * 2) },
    corsOrigins: optional(V.corsOrigins) ?? [],
    tlsHandshakeTimeoutMs: required(V.tlsHandshakeTimeoutMs),
    dbTimeoutMs: required(V.dbTimeoutMs),
    shutdownTimeoutMs: required(V.shutdownTimeoutMs),
    opsHost: required(V.opsHost),
    opsPort: optional(V.opsPort),
    drainDelayMs: required(V.drainDelayMs),
    logLevel: required(V.logLevel),
    logBufferBytes: required(V.logBufferBytes),
    events: {
      busUrl: optional(V.busUrl),
      busExchange: required(V.busExchange),
      webhookUrls,
      webhookSecret,
      webhookTimeoutMs: required(V.webhookTimeoutMs),
      retryMinMs,
      retryMaxMs,
      pollMs: required(V.eventPollMs),
    },
  };
  return errors.length > 0 ? { ok: false, errors } : { ok: true, config };
}

export function loadDotEnv(cwd: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const path = join(cwd, ".env");
  const result = dotenv.config({ path, processEnv: env, override: false, quiet: true });
  if (result.error) {
    if ((result.error as { code?: unknown }).code === "ENOENT") return null;
    throw new Error(`cannot read ${path}: ${result.error.message}`);
  }
  return path;
}
