import { join } from "node:path";
import dotenv from "dotenv";
import type { Config, Values } from "./config.js";
import { VARIABLE_LIST, VARIABLES, type Variable } from "./variables.js";
import { shownUrl } from "../shown-url.js";

export type LoadConfigResult = { ok: true; config: Config } | { ok: false; errors: string[] };

/**
 * Reads and validates the whole configuration (the variables of
 * variables.ts). Every bad variable is reported (each message starts with
 * its name), not only the first one, in the list's order, then what is
 * wrong between variables. An empty value counts as unset, as `.env` files
 * and `docker -e X=` produce.
 */
export function loadConfig(env: NodeJS.ProcessEnv, cwd: string = process.cwd()): LoadConfigResult {
  const errors: string[] = [];
  /** The variables whose value did not parse: they read as unset. */
  const misread = new Set<Variable<unknown>>();
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === "" ? undefined : value;
  };
  const isSet = (v: Variable<unknown>): boolean => read(v.name) !== undefined;

  /** The variable's value when set, else its default's, else its `unset` value. A bad value is recorded and reads as if unset. */
  function value<T>(v: Variable<T>): T {
    const unset = (): T => (v.default === null ? v.unset : v.parse(v.default, cwd));
    const raw = read(v.name);
    if (raw === undefined) return unset();
    try {
      return v.parse(raw, cwd);
    } catch (error) {
      const got = v.secret ? ` (value not shown, ${raw.length} characters)` : `, got ${JSON.stringify(withoutPassword(raw))}`;
      errors.push(`${v.name}: ${(error as Error).message}${got}`);
      misread.add(v);
      return unset();
    }
  }

  const values = Object.fromEntries(Object.entries(VARIABLES).map(([key, v]) => [key, value<unknown>(v)])) as Values;
  const {
    rateLimit: rate,
    rateBurst: burst,
    authCheckRate: checkRate,
    authCheckBurst: checkBurst,
    busUrl,
    busExchange,
    webhookUrls,
    webhookSecret,
    webhookTimeoutMs,
    retryMinMs,
    retryMaxMs,
    pollMs,
    ...rest
  } = values;

  const V = VARIABLES;
  if (isSet(V.tlsCert) !== isSet(V.tlsKey)) {
    const [missing, other] = isSet(V.tlsCert) ? [V.tlsKey, V.tlsCert] : [V.tlsCert, V.tlsKey];
    errors.push(`${missing.name}: must be set together with ${other.name} (or neither, for a generated self-signed certificate)`);
  }
  if (burst !== null && rate > 0 && burst < rate) {
    errors.push(`${V.rateBurst.name}: must be at least ${V.rateLimit.name} (${rate}), got ${JSON.stringify(read(V.rateBurst.name))}`);
  }
  if (checkBurst !== null && checkRate > 0 && checkBurst < checkRate) {
    errors.push(`${V.authCheckBurst.name}: must be at least ${V.authCheckRate.name} (${checkRate}), got ${JSON.stringify(read(V.authCheckBurst.name))}`);
  }
  if (webhookUrls.length > 0 && webhookSecret === null && !isSet(V.webhookSecret)) {
    errors.push(`${V.webhookSecret.name}: must be set when ${V.webhookUrls.name} is`);
  }
  // Only between two values that parsed: one that did not is reported already.
  if (retryMaxMs < retryMinMs && !misread.has(V.retryMaxMs) && !misread.has(V.retryMinMs)) {
    // Unset, the maximum is its default: the message says so, since the
    // operator only set the minimum.
    const max = read(V.retryMaxMs.name);
    const got = max === undefined ? `, got the default "${V.retryMaxMs.default}" (unset)` : `, got ${JSON.stringify(max)}`;
    errors.push(`${V.retryMaxMs.name}: must be at least ${V.retryMinMs.name} (${retryMinMs} ms)${got}`);
  }
  // The API and the operator listener on one port: the second to listen
  // would fail with EADDRINUSE, which reads as another process's doing.
  // Refused whatever the two addresses: telling which ones overlap (a name,
  // a wildcard, IPv4 inside IPv6) is the system's job, and two separate
  // addresses on one port is a layout no deployment needs.
  if (rest.port !== 0 && rest.opsPort === rest.port) {
    errors.push(`${V.opsPort.name}: must differ from ${V.port.name} (${rest.port}): the API and the operator listener cannot share a port`);
  }

  const config: Config = {
    ...rest,
    rateLimit: rate === 0 ? null : { perSecond: rate, burst: burst ?? Math.max(1, rate * 2) },
    authCheckLimit: checkRate === 0 ? null : { perSecond: checkRate, burst: checkBurst ?? Math.max(100, checkRate * 2) },
    events: { busUrl, busExchange, webhookUrls, webhookSecret, webhookTimeoutMs, retryMinMs, retryMaxMs, pollMs },
  };
  return errors.length > 0 ? { ok: false, errors } : { ok: true, config };
}

/** agentctl's variables (client/cli.ts), often exported in the same shell: not agentd's, but no mistake either. */
export const AGENTCTL_VARIABLES: ReadonlySet<string> = new Set(["AGENTD_URL", "AGENTD_TOKEN", "AGENTD_CACERT", "AGENTD_TIMEOUT"]);

/**
 * The AGENTD_* names in `env` that neither agentd nor agentctl reads,
 * sorted: a misspelt variable is otherwise ignored without a word, and the
 * setting it meant stays at its default.
 */
export function unknownVariables(env: NodeJS.ProcessEnv): string[] {
  const known = new Set<string>(VARIABLE_LIST.map((v) => v.name));
  return Object.keys(env)
    .filter((name) => name.startsWith("AGENTD_") && !known.has(name) && !AGENTCTL_VARIABLES.has(name))
    .sort();
}

export function loadDotEnv(cwd: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const path = join(cwd, ".env");
  const fromFile: NodeJS.ProcessEnv = {};
  const result = dotenv.config({ path, processEnv: fromFile, quiet: true });
  if (result.error) {
    if ((result.error as { code?: unknown }).code === "ENOENT") return null;
    throw new Error(`cannot read ${path}: ${result.error.message}`);
  }
  // Real variables win, but an empty one counts as unset (loadConfig), as
  // `docker run -e X=` or systemd's `Environment=X=` give it: the file's
  // value then applies rather than the default.
  for (const [name, value] of Object.entries(fromFile)) {
    if (env[name] === undefined || env[name].trim() === "") env[name] = value;
  }
  return path;
}

/**
 * A refused value as an error may show it: a URL's password and query
 * masked, as the banner shows URLs (shownUrl), also in one that does not
 * parse (a port out of range, a space in the host).
 */
function withoutPassword(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password !== "" || url.search !== "") return shownUrl(raw);
  } catch {
    // Everything between the user name's `:` and the last `@` may be the
    // password (it may hold `@`, `/`, `?` or `#` itself); then the query.
    return raw.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/?#@:]*:).*@/is, "$1***@").replace(/\?.*$/s, "?…");
  }
  return raw;
}
