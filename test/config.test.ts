// Configuration from the environment: defaults, every variable's
// validation (the message names the variable) and the .env helper.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, loadDotEnv, unknownVariables } from "../server/config/load.js";
import { renderEnvExample, renderEnvHelp } from "../server/config/env-docs.js";
import { VARIABLE_LIST } from "../server/config/variables.js";
import type { Config } from "../server/config/config.js";
import { sinkNames } from "../server/events/sink.js";

function ok(env: NodeJS.ProcessEnv, cwd = "/srv/agentd"): Config {
  const result = loadConfig(env, cwd);
  if (!result.ok) throw new Error(`unexpected errors: ${result.errors.join("; ")}`);
  return result.config;
}

function errors(env: NodeJS.ProcessEnv): string[] {
  const result = loadConfig(env, "/srv/agentd");
  if (result.ok) throw new Error(`accepted ${JSON.stringify(env)}`);
  return result.errors;
}

describe("defaults", () => {
  it("an empty environment gives the documented defaults", () => {
    expect(ok({})).toEqual({
      host: "127.0.0.1",
      port: 9493,
      dataDir: "/srv/agentd/data",
      databaseUrl: null,
      tlsCert: null,
      tlsKey: null,
      originUuid: null,
      adminToken: null,
      authUrl: null,
      authTimeoutMs: 2000,
      authCacheTtlMs: 10_000,
      authCacheSize: 10_000,
      validateResponses: false,
      bodyLimitBytes: 16_384,
      rateLimit: { perSecond: 100, burst: 200 },
      authCheckLimit: { perSecond: 100, burst: 200 },
      corsOrigins: [],
      tlsHandshakeTimeoutMs: 10_000,
      idleTimeoutMs: 30_000,
      maxConnections: null,
      dbTimeoutMs: 5000,
      dbStallTimeoutMs: 120_000,
      shutdownTimeoutMs: 10_000,
      opsHost: "127.0.0.1",
      opsPort: 9494,
      drainDelayMs: 5000,
      logLevel: "info",
      events: {
        busUrl: null,
        busExchange: "xivo",
        webhookUrls: [],
        webhookSecret: null,
        webhookTimeoutMs: 5000,
        retryMinMs: 1000,
        retryMaxMs: 60_000,
        pollMs: 500,
      },
      logBufferBytes: 4_194_304,
    } satisfies Config);
  });

  it("empty values count as unset", () => {
    expect(ok({ AGENTD_PORT: "", AGENTD_DATABASE_URL: " ", AGENTD_TLS_CERT: "" })).toEqual(ok({}));
  });

  it("ignores unrelated variables", () => {
    expect(ok({ PATH: "/bin", PORT: "x", AGENTD_TEST_DATABASE_URL: "nonsense" })).toEqual(ok({}));
  });

  it("every variable of the list is read", () => {
    const names = VARIABLE_LIST.map((v) => v.name);
    expect(new Set(names).size).toBe(names.length);
    // Each variable changes the result or is validated when given garbage.
    for (const name of names) {
      const result = loadConfig({ [name]: "\u0000garbage value" }, "/srv/agentd");
      const changed = result.ok ? JSON.stringify(result.config) !== JSON.stringify(ok({})) : result.errors.some((e) => e.includes(name));
      expect(changed, name).toBe(true);
    }
    for (const v of VARIABLE_LIST) expect(v.description.length, v.name).toBeGreaterThan(10);
  });

  it("each default is what its own parser makes of it: setting a variable to its default changes nothing", () => {
    for (const v of VARIABLE_LIST) {
      if (v.default === null) continue;
      expect(ok({ [v.name]: v.default }), v.name).toEqual(ok({}));
    }
  });

  it("--help and .env.example list every variable with its default", () => {
    const help = renderEnvHelp();
    const example = renderEnvExample();
    for (const v of VARIABLE_LIST) {
      expect(help).toContain(v.name);
      expect(example).toContain(`# ${v.name}=${v.default ?? ""}\n`);
    }
    expect(help).toContain("AGENTD_PORT (default: 9493)");
  });
});

describe("valid values", () => {
  it("parses every variable", () => {
    const config = ok({
      AGENTD_HOST: "0.0.0.0",
      AGENTD_PORT: "0",
      AGENTD_DATA_DIR: "var/agentd",
      AGENTD_DATABASE_URL: "postgresql://agentd:secret@db.example:5432/agentd",
      AGENTD_TLS_CERT: "tls/cert.pem",
      AGENTD_TLS_KEY: "/etc/agentd/key.pem",
      AGENTD_ORIGIN_UUID: "0F6E0A6C-3A1B-4E5B-9C4D-1234567890AB",
      AGENTD_ADMIN_TOKEN: "0123456789abcdef-admin",
      AGENTD_AUTH_URL: "https://auth.example:9497/",
      AGENTD_AUTH_TIMEOUT: "500ms",
      AGENTD_AUTH_CACHE_TTL: "0",
      AGENTD_AUTH_CACHE_SIZE: "50",
      AGENTD_VALIDATE_RESPONSES: "1",
      AGENTD_BODY_LIMIT: "1mb",
      AGENTD_RATE_LIMIT: "10",
      AGENTD_RATE_BURST: "10",
      AGENTD_CORS_ORIGINS: "https://app.example.com, http://localhost:5173",
      AGENTD_TLS_HANDSHAKE_TIMEOUT: "3s",
      AGENTD_IDLE_TIMEOUT: "12s",
      AGENTD_MAX_CONNECTIONS: "300",
      AGENTD_AUTH_CHECK_RATE: "20",
      AGENTD_AUTH_CHECK_BURST: "150",
      AGENTD_DB_TIMEOUT: "1m",
      AGENTD_DB_STALL_TIMEOUT: "5m",
      AGENTD_SHUTDOWN_TIMEOUT: "2s",
      AGENTD_LOG_LEVEL: "debug",
      AGENTD_OPS_HOST: "10.0.0.5",
      AGENTD_OPS_PORT: "0",
      AGENTD_DRAIN_DELAY: "0",
      AGENTD_BUS_URL: "amqp://guest:guest@bus.example:5672",
      AGENTD_BUS_EXCHANGE: "events",
      AGENTD_WEBHOOK_URLS: "https://hooks.example/a, http://10.0.0.9:8080/b",
      AGENTD_WEBHOOK_SECRET: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      AGENTD_WEBHOOK_TIMEOUT: "2s",
      AGENTD_EVENT_RETRY_MIN: "100ms",
      AGENTD_EVENT_RETRY_MAX: "10s",
      AGENTD_EVENT_POLL_INTERVAL: "50ms",
      AGENTD_LOG_BUFFER: "512kb",
    });
    expect(config).toEqual({
      host: "0.0.0.0",
      port: 0,
      dataDir: "/srv/agentd/var/agentd",
      databaseUrl: "postgresql://agentd:secret@db.example:5432/agentd",
      tlsCert: "/srv/agentd/tls/cert.pem",
      tlsKey: "/etc/agentd/key.pem",
      originUuid: "0f6e0a6c-3a1b-4e5b-9c4d-1234567890ab",
      adminToken: "0123456789abcdef-admin",
      authUrl: "https://auth.example:9497",
      authTimeoutMs: 500,
      authCacheTtlMs: 0,
      authCacheSize: 50,
      validateResponses: true,
      bodyLimitBytes: 1_048_576,
      rateLimit: { perSecond: 10, burst: 10 },
      authCheckLimit: { perSecond: 20, burst: 150 },
      corsOrigins: ["https://app.example.com", "http://localhost:5173"],
      tlsHandshakeTimeoutMs: 3000,
      idleTimeoutMs: 12_000,
      maxConnections: 300,
      dbTimeoutMs: 60_000,
      dbStallTimeoutMs: 300_000,
      shutdownTimeoutMs: 2000,
      opsHost: "10.0.0.5",
      opsPort: 0,
      drainDelayMs: 0,
      logLevel: "debug",
      events: {
        busUrl: "amqp://guest:guest@bus.example:5672",
        busExchange: "events",
        webhookUrls: ["https://hooks.example/a", "http://10.0.0.9:8080/b"],
        webhookSecret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        webhookTimeoutMs: 2000,
        retryMinMs: 100,
        retryMaxMs: 10_000,
        pollMs: 50,
      },
      logBufferBytes: 524_288,
    } satisfies Config);
  });

  it("accepts the documented spellings", () => {
    expect(ok({ AGENTD_OPS_PORT: "off" }).opsPort).toBeNull();
    expect(ok({ AGENTD_OPS_PORT: "OFF" }).opsPort).toBeNull();
    expect(ok({ AGENTD_BODY_LIMIT: "16384" }).bodyLimitBytes).toBe(16_384);
    expect(ok({ AGENTD_BODY_LIMIT: "16kb" }).bodyLimitBytes).toBe(16_384);
    expect(ok({ AGENTD_LOG_BUFFER: "16384" }).logBufferBytes).toBe(16_384);
    expect(ok({ AGENTD_LOG_BUFFER: "4mb" }).logBufferBytes).toBe(4_194_304);
    expect(ok({ AGENTD_AUTH_TIMEOUT: "2500" }).authTimeoutMs).toBe(2500);
    expect(ok({ AGENTD_AUTH_TIMEOUT: "2s" }).authTimeoutMs).toBe(2000);
    expect(ok({ AGENTD_SHUTDOWN_TIMEOUT: "1m" }).shutdownTimeoutMs).toBe(60_000);
    expect(ok({ AGENTD_VALIDATE_RESPONSES: "true" }).validateResponses).toBe(true);
    expect(ok({ AGENTD_VALIDATE_RESPONSES: "false" }).validateResponses).toBe(false);
    expect(ok({ AGENTD_VALIDATE_RESPONSES: "0" }).validateResponses).toBe(false);
    expect(ok({ AGENTD_DATABASE_URL: "postgres://postgres@127.0.0.1:5432/test" }).databaseUrl).toBe("postgres://postgres@127.0.0.1:5432/test");
    expect(ok({ AGENTD_CORS_ORIGINS: "*" }).corsOrigins).toEqual(["*"]);
    expect(ok({ AGENTD_AUTH_URL: "http://auth:9497/api/auth//" }).authUrl).toBe("http://auth:9497/api/auth");
    expect(ok({ AGENTD_DATA_DIR: "/var/lib/agentd" }).dataDir).toBe("/var/lib/agentd");
  });

  it("AGENTD_RATE_LIMIT=0 disables rate limiting; the burst defaults to twice the rate", () => {
    expect(ok({ AGENTD_RATE_LIMIT: "0" }).rateLimit).toBeNull();
    expect(ok({ AGENTD_RATE_LIMIT: "500" }).rateLimit).toEqual({ perSecond: 500, burst: 1000 });
    expect(ok({ AGENTD_RATE_BURST: "150" }).rateLimit).toEqual({ perSecond: 100, burst: 150 });
  });

  it("AGENTD_AUTH_CHECK_RATE=0 lifts the cap on auth checks; the burst defaults to twice the rate, at least 100", () => {
    expect(ok({ AGENTD_AUTH_CHECK_RATE: "0" }).authCheckLimit).toBeNull();
    expect(ok({ AGENTD_AUTH_CHECK_RATE: "10" }).authCheckLimit).toEqual({ perSecond: 10, burst: 100 });
    expect(ok({ AGENTD_AUTH_CHECK_RATE: "400" }).authCheckLimit).toEqual({ perSecond: 400, burst: 800 });
  });

  it("resolves a relative data directory against the working directory", () => {
    expect(ok({}, "/tmp/elsewhere").dataDir).toBe("/tmp/elsewhere/data");
    expect(loadConfig({}).ok && (loadConfig({}) as { config: Config }).config.dataDir).toBe(resolve("data"));
  });
});

describe("bad values name their variable", () => {
  const cases: Array<[string, string, RegExp]> = [
    ["AGENTD_HOST", "local host", /host name or IP/],
    ["AGENTD_PORT", "abc", /^AGENTD_PORT: must be an integer from 0 to 65535, got "abc"$/],
    ["AGENTD_PORT", "65536", /integer from 0 to 65535/],
    ["AGENTD_PORT", "-1", /integer from 0 to 65535/],
    ["AGENTD_PORT", "80.5", /integer/],
    ["AGENTD_OPS_PORT", "on", /^AGENTD_OPS_PORT: must be an integer from 0 to 65535, or off, got "on"$/],
    ["AGENTD_OPS_PORT", "70000", /or off/],
    ["AGENTD_DRAIN_DELAY", "soon", /^AGENTD_DRAIN_DELAY: must be a duration/],
    ["AGENTD_DATABASE_URL", "mysql://db/agentd", /postgres:\/\/ or postgresql:\/\//],
    ["AGENTD_DATABASE_URL", "not a url", /postgres:\/\//],
    // Found by a docs reader: taken as one URL whose path held the second, and every event went to the first host only.
    ["AGENTD_WEBHOOK_URLS", "http://a.example/ http://b.example/", /^AGENTD_WEBHOOK_URLS: must be URLs separated by commas: one holds a space/],
    // Found by an operator's walk: nothing said why a URL libpq would take is refused here.
    ["AGENTD_DATABASE_URL", "postgres://agentd:pa/ss#1@db/agentd", /^AGENTD_DATABASE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL that parses: percent-encode @ : \/ \? # % in the user name and password .* \(value not shown, 35 characters\)$/],
    ["AGENTD_DATABASE_URL", "postgresql://agentd@/agentd?host=/var/run/postgresql", /give a Unix socket as \?host=\/path after a host name/],
    ["AGENTD_ORIGIN_UUID", "1234", /must be a UUID, got "1234"/],
    ["AGENTD_ADMIN_TOKEN", "short", /at least 16/],
    ["AGENTD_ADMIN_TOKEN", "sixteen chars with spaces", /without spaces/],
    ["AGENTD_AUTH_URL", "ftp://auth", /http:\/\/ or https:\/\//],
    ["AGENTD_AUTH_URL", "auth.example:9497", /http:\/\/ or https:\/\//],
    ["AGENTD_AUTH_URL", "https://auth/?x=1", /query/],
    // Found by a security review: never sent, only shown in the banner and the log.
    ["AGENTD_AUTH_URL", "https://svc:s3cret@auth.example", /must not carry a user name or password: .*, got "https:\/\/svc:\*\*\*@auth.example\/"$/],
    ["AGENTD_AUTH_URL", "ftp://u:s3cret@auth.example", /http:\/\/ or https:\/\/ URL, got "ftp:\/\/u:\*\*\*@auth.example\/"$/],
    ["AGENTD_AUTH_URL", "https://u:s3cret@auth.example:99999/", /http:\/\/ or https:\/\/ URL, got "https:\/\/u:\*\*\*@auth.example:99999\/"$/],
    ["AGENTD_AUTH_URL", "https://auth.example/?token=s3cret", /query or fragment, got "https:\/\/auth.example\/\?…"$/],
    // Found by the review of that masking: a password holding @, /, # or ? showed in part.
    ["AGENTD_AUTH_URL", "https://svc:p@ss@auth.example:99999/", /URL, got "https:\/\/svc:\*\*\*@auth.example:99999\/"$/],
    ["AGENTD_AUTH_URL", "https://svc:pa/ss@auth.example:99999/", /URL, got "https:\/\/svc:\*\*\*@auth.example:99999\/"$/],
    ["AGENTD_AUTH_URL", "https://svc:pa#ss@auth example/", /URL, got "https:\/\/svc:\*\*\*@auth example\/"$/],
    ["AGENTD_AUTH_URL", "https://svc:pa?ss@auth example/", /URL, got "https:\/\/svc:\*\*\*@auth example\/"$/],
    ["AGENTD_AUTH_TIMEOUT", "soon", /duration like 500ms, 2s or 1m/],
    ["AGENTD_AUTH_TIMEOUT", "0", /greater than 0/],
    ["AGENTD_AUTH_TIMEOUT", "-2s", /duration/],
    ["AGENTD_AUTH_CACHE_TTL", "ten", /duration/],
    ["AGENTD_AUTH_CACHE_SIZE", "0", /integer from 1/],
    ["AGENTD_AUTH_CACHE_SIZE", "1e3", /integer/],
    ["AGENTD_VALIDATE_RESPONSES", "yes", /true, false, 1 or 0/],
    ["AGENTD_BODY_LIMIT", "big", /size in bytes/],
    ["AGENTD_BODY_LIMIT", "0", /size in bytes/],
    ["AGENTD_BODY_LIMIT", "-1kb", /size in bytes/],
    ["AGENTD_RATE_LIMIT", "fast", /integer/],
    ["AGENTD_RATE_LIMIT", "1.5", /integer/],
    ["AGENTD_RATE_BURST", "50", /at least AGENTD_RATE_LIMIT \(100\)/],
    ["AGENTD_RATE_BURST", "lots", /integer/],
    ["AGENTD_AUTH_CHECK_RATE", "-1", /integer/],
    ["AGENTD_AUTH_CHECK_BURST", "99", /at least AGENTD_AUTH_CHECK_RATE \(100\)/],
    ["AGENTD_IDLE_TIMEOUT", "0", /duration/],
    ["AGENTD_MAX_CONNECTIONS", "0", /integer from 1/],
    ["AGENTD_CORS_ORIGINS", "https://app.example.com/", /not an origin/],
    ["AGENTD_CORS_ORIGINS", "app.example.com", /not an origin/],
    ["AGENTD_CORS_ORIGINS", "*,https://a.example", /cannot be combined/],
    ["AGENTD_DB_TIMEOUT", "forever", /duration/],
    ["AGENTD_DB_TIMEOUT", "30d", /duration/], // beyond what a timer can wait
    ["AGENTD_SHUTDOWN_TIMEOUT", "1x", /duration/],
    ["AGENTD_LOG_BUFFER", "lots", /size in bytes/],
    ["AGENTD_LOG_BUFFER", "1kb", /at least 16kb/],
    ["AGENTD_LOG_LEVEL", "verbose", /one of fatal, error, warn, info, debug, trace, silent/],
  ];

  it.each(cases)("%s=%j", (name, value, message) => {
    const found = errors({ [name]: value });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(new RegExp(`^${name}: `));
    expect(found[0]).toMatch(message);
  });

  it("reports every bad variable at once", () => {
    const found = errors({ AGENTD_PORT: "x", AGENTD_LOG_LEVEL: "loud", AGENTD_BODY_LIMIT: "huge" });
    expect(found.map((e) => e.split(":")[0])).toEqual(["AGENTD_PORT", "AGENTD_BODY_LIMIT", "AGENTD_LOG_LEVEL"]);
  });

  it("never echoes a secret back", () => {
    const [tokenError] = errors({ AGENTD_ADMIN_TOKEN: "s3cr3t" });
    expect(tokenError).not.toContain("s3cr3t");
    const [urlError] = errors({ AGENTD_DATABASE_URL: "mysql://root:hunter2@db/x" });
    expect(urlError).not.toContain("hunter2");
    expect(urlError).toMatch(/^AGENTD_DATABASE_URL: /);
  });
});

describe("TLS files: both or neither", () => {
  it("neither is fine (generated certificate)", () => {
    expect(ok({}).tlsCert).toBeNull();
  });

  it("both are fine and resolved to absolute paths", () => {
    const config = ok({ AGENTD_TLS_CERT: "c.pem", AGENTD_TLS_KEY: "k.pem" });
    expect([config.tlsCert, config.tlsKey]).toEqual(["/srv/agentd/c.pem", "/srv/agentd/k.pem"]);
  });

  it("only one is an error naming the missing one and its partner", () => {
    expect(errors({ AGENTD_TLS_CERT: "c.pem" })).toEqual([
      "AGENTD_TLS_KEY: must be set together with AGENTD_TLS_CERT (or neither, for a generated self-signed certificate)",
    ]);
    expect(errors({ AGENTD_TLS_KEY: "k.pem" })).toEqual([
      "AGENTD_TLS_CERT: must be set together with AGENTD_TLS_KEY (or neither, for a generated self-signed certificate)",
    ]);
  });
});

describe("loadDotEnv", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "agentd-dotenv-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("loads .env without overriding real variables", async () => {
    await writeFile(join(dir, ".env"), "AGENTD_PORT=9999\nAGENTD_LOG_LEVEL=debug\n# comment\nAGENTD_CORS_ORIGINS=\"https://a.example\"\n");
    const env: NodeJS.ProcessEnv = { AGENTD_PORT: "8443" };
    expect(loadDotEnv(dir, env)).toBe(join(dir, ".env"));
    expect(env).toEqual({ AGENTD_PORT: "8443", AGENTD_LOG_LEVEL: "debug", AGENTD_CORS_ORIGINS: "https://a.example" });
    const config = ok(env);
    expect([config.port, config.logLevel, config.corsOrigins]).toEqual([8443, "debug", ["https://a.example"]]);
  });

  // Found by an operator's walk: `docker run -e AGENTD_LOG_LEVEL=` hid the file's value, and the
  // default applied, though an empty value counts as unset.
  it("takes the file's value where the real variable is empty", async () => {
    await writeFile(join(dir, ".env"), "AGENTD_PORT=9999\nAGENTD_LOG_LEVEL=warn\n");
    const env: NodeJS.ProcessEnv = { AGENTD_PORT: "8443", AGENTD_LOG_LEVEL: "" };
    loadDotEnv(dir, env);
    expect([ok(env).port, ok(env).logLevel]).toEqual([8443, "warn"]);
    const blank: NodeJS.ProcessEnv = { AGENTD_LOG_LEVEL: "  " };
    loadDotEnv(dir, blank);
    expect(ok(blank).logLevel).toBe("warn");
  });

  it("is a no-op without a .env file", async () => {
    const empty = await mkdtemp(join(dir, "empty-"));
    const env: NodeJS.ProcessEnv = { A: "1" };
    expect(loadDotEnv(empty, env)).toBeNull();
    expect(env).toEqual({ A: "1" });
  });
});

describe("unknownVariables", () => {
  it("names the AGENTD_* variables neither agentd nor agentctl reads, and no other", () => {
    const env: NodeJS.ProcessEnv = {
      AGENTD_PROT: "9999",
      AGENTD_DRAIN_DELY: "1s",
      AGENTD_PORT: "8443",
      AGENTD_URL: "https://localhost:9493/1.0",
      AGENTD_TOKEN: "t",
      AGENTD_CACERT: "cert.pem",
      PATH: "/usr/bin",
      agentd_port: "1",
    };
    expect(unknownVariables(env)).toEqual(["AGENTD_DRAIN_DELY", "AGENTD_PROT"]);
    expect(unknownVariables(Object.fromEntries(VARIABLE_LIST.map((v) => [v.name, "x"])))).toEqual([]);
  });
});

describe("event sinks", () => {
  it("refuses webhook URLs without a secret or with credentials, a bad secret, a bad bus URL and a retry maximum below the minimum", () => {
    expect(errors({ AGENTD_WEBHOOK_URLS: "https://hooks.example/a" })).toEqual(["AGENTD_WEBHOOK_SECRET: must be set when AGENTD_WEBHOOK_URLS is"]);
    expect(errors({ AGENTD_WEBHOOK_URLS: "https://hooks.example/a", AGENTD_WEBHOOK_SECRET: "short" })[0]).toMatch(/^AGENTD_WEBHOOK_SECRET: must be whsec_.*value not shown/);
    // Several secrets, while one replaces another: each must be one, and the value is shown to no one.
    // Found by an events integrator: 4n+1 characters, whose last Node's decoder dropped (and Python's refused).
    expect(errors({ AGENTD_WEBHOOK_URLS: "https://hooks.example/a", AGENTD_WEBHOOK_SECRET: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwA" })[0]).toMatch(/^AGENTD_WEBHOOK_SECRET: must be whsec_/);
    expect(ok({ AGENTD_WEBHOOK_URLS: "https://hooks.example/a", AGENTD_WEBHOOK_SECRET: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwAB=" }).events.webhookSecret).toBe("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwAB=");
    expect(ok({ AGENTD_WEBHOOK_URLS: "https://hooks.example/a", AGENTD_WEBHOOK_SECRET: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwAB" }).events.webhookSecret).toBe("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwAB");
    expect(ok({ AGENTD_WEBHOOK_URLS: "https://hooks.example/a", AGENTD_WEBHOOK_SECRET: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwAB==" }).events.webhookSecret).toBe("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwAB==");
    const rotating = errors({ AGENTD_WEBHOOK_URLS: "https://hooks.example/a", AGENTD_WEBHOOK_SECRET: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw short" });
    expect(rotating[0]).toMatch(/^AGENTD_WEBHOOK_SECRET: must be whsec_.*several such secrets separated by spaces.*value not shown/);
    expect(rotating[0]).not.toContain("MfKQ9r8");
    expect(ok({ AGENTD_WEBHOOK_URLS: "https://hooks.example/a", AGENTD_WEBHOOK_SECRET: "  whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw \t MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw " }).events.webhookSecret).toBe(
      "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    );
    expect(errors({ AGENTD_WEBHOOK_URLS: "ftp://hooks.example/a", AGENTD_WEBHOOK_SECRET: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" })[0]).toMatch(/^AGENTD_WEBHOOK_URLS: must be an http:\/\/ or https:\/\/ URL/);
    const withCredentials = errors({ AGENTD_WEBHOOK_URLS: "https://hooks.example/a, https://bob:s3cret@hooks.example/b", AGENTD_WEBHOOK_SECRET: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" });
    expect(withCredentials).toHaveLength(1);
    expect(withCredentials[0]).toMatch(/^AGENTD_WEBHOOK_URLS: must not carry a user name or password/);
    expect(withCredentials[0]).not.toContain("s3cret");
    expect(errors({ AGENTD_BUS_URL: "http://bus.example" })[0]).toMatch(/^AGENTD_BUS_URL: must be an amqp:\/\/ or amqps:\/\/ URL/);
    expect(errors({ AGENTD_EVENT_RETRY_MIN: "10s", AGENTD_EVENT_RETRY_MAX: "1s" })).toEqual([
      'AGENTD_EVENT_RETRY_MAX: must be at least AGENTD_EVENT_RETRY_MIN (10000 ms), got "1s"',
    ]);
    expect(errors({ AGENTD_EVENT_RETRY_MIN: "2m" })).toEqual(["AGENTD_EVENT_RETRY_MAX: must be at least AGENTD_EVENT_RETRY_MIN (120000 ms), got the default \"1m\" (unset)"]);
    // A value that does not parse is reported once, not compared as if it were the default.
    expect(errors({ AGENTD_EVENT_RETRY_MIN: "2m", AGENTD_EVENT_RETRY_MAX: "soon" })).toEqual([expect.stringMatching(/^AGENTD_EVENT_RETRY_MAX: must be a duration .*, got "soon"$/)]);
  });

  it("refuses the API and the operator listener on one port, whatever their addresses", () => {
    const clash = ["AGENTD_OPS_PORT: must differ from AGENTD_PORT (9000): the API and the operator listener cannot share a port"];
    expect(errors({ AGENTD_PORT: "9000", AGENTD_OPS_PORT: "9000" })).toEqual(clash);
    expect(errors({ AGENTD_PORT: "9000", AGENTD_OPS_PORT: "9000", AGENTD_HOST: "0.0.0.0" })).toEqual(clash);
    expect(errors({ AGENTD_PORT: "9000", AGENTD_OPS_PORT: "9000", AGENTD_OPS_HOST: "localhost" })).toEqual(clash);
    // Each on port 0 (a free one each), or the listener off: no clash.
    expect(ok({ AGENTD_PORT: "0", AGENTD_OPS_PORT: "0" }).opsPort).toBe(0);
    expect(ok({ AGENTD_PORT: "9494", AGENTD_OPS_PORT: "off" }).opsPort).toBeNull();
  });

  it("writes webhook URLs as the URL standard does, one sink per receiver however it is spelled; a trailing slash is another URL", () => {
    const config = ok({
      AGENTD_WEBHOOK_URLS: "HTTP://Hooks.Example:80/x/../a, http://hooks.example/a, https://hooks.example:443/./b?k=1, http://hooks.example/a/",
      AGENTD_WEBHOOK_SECRET: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    });
    expect(config.events.webhookUrls).toEqual(["http://hooks.example/a", "https://hooks.example/b?k=1", "http://hooks.example/a/"]);
    expect(sinkNames(config.events)).toEqual(["webhook http://hooks.example/a", "webhook https://hooks.example/b?k=1", "webhook http://hooks.example/a/"]);
  });
});
