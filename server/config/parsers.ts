// The parsers of the environment variables (variables.ts): each takes the
// raw value, returns what the server uses, or throws an Error whose message
// says what the value must be.
import { resolve } from "node:path";
import bytes from "bytes";
import ms from "ms";

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** setTimeout's ceiling: a longer delay would silently fire at once. */
const MAX_DURATION_MS = 2 ** 31 - 1;

/** A file or folder, relative to the working directory `cwd` unless absolute. */
export function filePath(raw: string, cwd: string): string {
  return resolve(cwd, raw);
}

export function size(raw: string, min: number, examples: string): number {
  const value = bytes.parse(raw);
  if (value === null || !Number.isSafeInteger(value) || value < min || !/^\d+(\.\d+)?\s*([kmgtp]?b)?$/i.test(raw)) {
    throw new Error(`must be a size in bytes like ${examples}`);
  }
  return value;
}

export function hostName(raw: string): string {
  if (/\s/.test(raw)) throw new Error("must be a host name or IP address");
  return raw;
}

export function integer(raw: string, min: number, max: number): number {
  const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= min && value <= max)) throw new Error(`must be an integer from ${min} to ${max}`);
  return value;
}

/** A port, or null for `off`. */
export function portOrOff(raw: string): number | null {
  if (raw.toLowerCase() === "off") return null;
  if (!/^\d+$/.test(raw) || Number(raw) > 65535) throw new Error("must be an integer from 0 to 65535, or off");
  return Number(raw);
}

export function boolean(raw: string): boolean {
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
export function duration(raw: string, min: number): number {
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

/** "an" before a vowel sound (amqp, http), "a" otherwise: every scheme here is read letter by letter or as a word. */
const article = (protocol: string): string => (/^[aeiouh]/.test(protocol) ? "an" : "a");

export function url(raw: string, protocols: readonly string[], needsHost: boolean): URL {
  const refused = new Error(`must be ${article(protocols[0]!)} ${protocols.map((p) => `${p}//`).join(" or ")} URL`);
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw refused;
  }
  if (!protocols.includes(parsed.protocol) || (needsHost && parsed.hostname === "")) throw refused;
  return parsed;
}

export function postgresUrl(raw: string): string {
  // An empty host is fine here: pg then takes it from ?host= (Unix socket) or PGHOST.
  try {
    url(raw, ["postgres:", "postgresql:"], false);
  } catch (error) {
    // The value is a secret, never shown: say the two ways a URL libpq takes can fail here.
    if (!/^postgres(ql)?:\/\//i.test(raw)) throw error;
    throw new Error(
      "must be a postgres:// or postgresql:// URL that parses: percent-encode @ : / ? # % in the user name and password (%40 %3A %2F %3F %23 %25), " +
        "and give a Unix socket as ?host=/path after a host name (postgres://agentd@localhost/agentd?host=/var/run/postgresql)",
      { cause: error },
    );
  }
  return raw;
}

/** The wazo-auth compatible service's base URL, without a trailing slash. */
export function authUrl(raw: string): string {
  const parsed = url(raw, ["http:", "https:"], true);
  if (parsed.search !== "" || parsed.hash !== "") throw new Error("must not have a query or fragment");
  // They would never be sent (each check carries the token it checks, and
  // nothing else), only shown: in the banner and the log.
  if (parsed.username !== "" || parsed.password !== "") throw new Error("must not carry a user name or password: the service is asked with the token being checked alone");
  return parsed.href.replace(/\/+$/, "");
}

export function amqpUrl(raw: string): string {
  url(raw, ["amqp:", "amqps:"], true);
  return raw;
}

export function uuid(raw: string): string {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(raw)) throw new Error("must be a UUID");
  return raw.toLowerCase();
}

export function token(raw: string): string {
  // It travels in the X-Auth-Token header: printable ASCII without spaces only.
  if (raw.length < 16 || !/^[\x21-\x7e]+$/.test(raw)) {
    throw new Error("must be at least 16 printable ASCII characters without spaces");
  }
  return raw;
}

export function exchangeName(raw: string): string {
  if (!/^[A-Za-z0-9_.:-]{1,127}$/.test(raw)) throw new Error("must be an AMQP exchange name (letters, digits, - _ . :)");
  return raw;
}

/**
 * The webhook URLs, each as the URL standard writes it (`href`: scheme and
 * host in lower case, no default port, no dot segments), once each: a URL
 * is a sink's identity in the outbox (events/sink.ts), so two spellings of
 * one receiver are one sink, sent each event once.
 */
export function webhookUrls(raw: string): string[] {
  const list: string[] = [];
  for (const item of raw.split(",").map((u) => u.trim()).filter((u) => u !== "")) {
    // The URL parser would take `http://a/ http://b/` as one URL, its path
    // `/%20http://b/`, and every event would go to the first host only.
    if (/\s/.test(item)) throw new Error("must be URLs separated by commas: one holds a space");
    // A user name or password in the URL would never reach the receiver
    // (undici sends no Authorization from it), which answers 401 forever:
    // receivers check the signature instead.
    const parsed = url(item, ["http:", "https:"], true);
    if (parsed.username !== "" || parsed.password !== "") throw new Error("must not carry a user name or password: receivers check the webhook signature");
    list.push(parsed.href);
  }
  if (list.length === 0) throw new Error("must list at least one http:// or https:// URL");
  return [...new Set(list)];
}

/**
 * Standard Webhooks signing secrets: one, or several separated by spaces
 * while one replaces another (each delivery is then signed with each).
 * Returned with single spaces between them.
 */
export function webhookSecret(raw: string): string {
  const secrets = raw.trim().split(/\s+/);
  for (const secret of secrets) {
    const encoded = secret.replace(/^whsec_/, "");
    const key = Buffer.from(encoded, "base64");
    // Node's decoder drops a last character that makes no byte (a length of
    // 4n+1), so two secrets would sign alike, and Python's refuses it.
    // Padding is taken as any decoder takes it, complete or not.
    const length = encoded.replace(/=+$/, "").length;
    if (!/^(whsec_)?[A-Za-z0-9+/]+={0,2}$/.test(secret) || key.length < 24 || length % 4 === 1) {
      throw new Error("must be whsec_ followed by at least 24 bytes in base64 (the whsec_ may be left out), or several such secrets separated by spaces");
    }
  }
  return secrets.join(" ");
}

export function logLevel(raw: string): LogLevel {
  const level = LOG_LEVELS.find((l) => l === raw.toLowerCase());
  if (level === undefined) throw new Error(`must be one of ${LOG_LEVELS.join(", ")}`);
  return level;
}

/** Browser origins for CORS, or `*` alone for any. */
export function origins(raw: string): string[] {
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
