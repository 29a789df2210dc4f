import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pino, type Logger } from "pino";
import { Agent } from "undici";
import { afterAll, beforeAll } from "vitest";
import { adminSocketPath, callAdminChannel } from "../../server/admin/channel.js";
import type { Config } from "../../server/config/config.js";
import { loadConfig } from "../../server/config/load.js";
import { openPostgres } from "../../server/db/postgres.js";
import { startServer, type RunningServer } from "../../server/serve.js";
import type { AgentRecord } from "../../server/store/agent-store.js";
import { readOriginUuid } from "../../server/store/deployment.js";
import { SqlAgentStore } from "../../server/store/sql-agent-store.js";
import { SqlTokenStore } from "../../server/store/sql-token-store.js";
import { ownDataDir as ownEmbeddedData } from "./data-dir.js";
import { callHttps, type Answer, type CallOptions } from "./https.js";

export type { Answer };

/** A fixed admin token for tests (AGENTD_ADMIN_TOKEN), ACL agentd.#. */
export const ADMIN_TOKEN = "test-admin-token-0123456789abcdef";

export interface TestServer {
  url: string;
  config: Config;
  running: RunningServer;
  /** PEM of the server's certificate, to trust it for this test only. */
  ca: string;
  dispatcher: Agent;
  /** A request to the API; `token` defaults to ADMIN_TOKEN, null sends none. */
  call(method: string, pathAndQuery: string, options?: CallOptions): Promise<Answer>;
  createToken(acls: string[], ttlSeconds?: number | null): Promise<string>;
  revokeToken(token: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the real server (HTTPS on an ephemeral port, response validation on)
 * exactly as `agentd serve` does, on a fresh PGlite data directory unless
 * the caller passes its own environment. The fresh directory is created
 * migrated and empty (test/helpers/data-dir.ts), so the server holds no demo
 * agent: only `agents`, loaded before it is handed over, `agentd import`
 * through the admin socket, or the store on PostgreSQL.
 */
export async function startTestServer(
  env: Record<string, string> = {},
  agents?: readonly AgentRecord[],
  /** Where the server logs; by default pino at AGENTD_LOG_LEVEL (silent unless `env` says otherwise). */
  logger?: Logger,
): Promise<TestServer> {
  const ownDataDir = env.AGENTD_DATA_DIR === undefined ? mkdtempSync(path.join(tmpdir(), "agentd-test-")) : null;
  const result = loadConfig({
    AGENTD_PORT: "0",
    AGENTD_DATA_DIR: ownDataDir ?? "",
    AGENTD_VALIDATE_RESPONSES: "true",
    AGENTD_LOG_LEVEL: "silent",
    AGENTD_RATE_LIMIT: "0",
    AGENTD_OPS_PORT: "0",
    AGENTD_DRAIN_DELAY: "0",
    AGENTD_ADMIN_TOKEN: ADMIN_TOKEN,
    ...env,
  });
  const removeOwnDataDir = () => ownDataDir && rmSync(ownDataDir, { recursive: true, force: true });
  if (!result.ok) {
    removeOwnDataDir();
    throw new Error(result.errors.join("\n"));
  }
  const config = result.config;
  let running: RunningServer;
  try {
    if (ownDataDir !== null && config.databaseUrl === null) await ownEmbeddedData(ownDataDir);
    running = await startServer(config, logger ?? pino({ level: config.logLevel }));
  } catch (err) {
    removeOwnDataDir();
    throw err;
  }
  const ca = readFileSync(running.certPath, "utf8");
  const dispatcher = new Agent({ connect: { ca } });

  const call: TestServer["call"] = (method, pathAndQuery, options = {}) =>
    callHttps(dispatcher, method, running.url + pathAndQuery, {
      ...options,
      token: options.token === undefined ? ADMIN_TOKEN : options.token,
    });

  async function tokens<T>(fn: (store: SqlTokenStore) => Promise<T>): Promise<T> {
    if (config.databaseUrl === null) throw new Error("embedded tokens go through the admin socket");
    const db = await openPostgres(config.databaseUrl, { timeoutMs: 5000 });
    try {
      return await fn(new SqlTokenStore(db));
    } finally {
      await db.close();
    }
  }

  const server: TestServer = {
    url: running.url,
    config,
    running,
    ca,
    dispatcher,
    call,
    async createToken(acls, ttlSeconds = null) {
      if (config.databaseUrl) return tokens(async (store) => (await store.create(acls, ttlSeconds)).token);
      const answer = await callAdminChannel(adminSocketPath(config.dataDir), { op: "token.create", acls, ttlSeconds });
      if (!answer?.ok || !answer.token) throw new Error(`token.create failed: ${JSON.stringify(answer)}`);
      return answer.token;
    },
    async revokeToken(token) {
      if (config.databaseUrl) {
        await tokens((store) => store.revoke(token));
        return;
      }
      const answer = await callAdminChannel(adminSocketPath(config.dataDir), { op: "token.revoke", token });
      if (!answer?.ok) throw new Error(`token.revoke failed: ${JSON.stringify(answer)}`);
    },
    async close() {
      await running.close();
      await dispatcher.close();
      removeOwnDataDir();
    },
  };
  if (agents !== undefined) {
    try {
      await loadAgents(config, agents);
    } catch (err) {
      await server.close();
      throw err;
    }
  }
  return server;
}

async function loadAgents(config: Config, agents: readonly AgentRecord[]): Promise<void> {
  if (config.databaseUrl) {
    const db = await openPostgres(config.databaseUrl, { timeoutMs: 5000 });
    try {
      await new SqlAgentStore(db, await readOriginUuid(db, config.originUuid)).upsert(agents);
    } finally {
      await db.close();
    }
    return;
  }
  const answer = await callAdminChannel(adminSocketPath(config.dataDir), { op: "import", text: JSON.stringify(agents) });
  if (!answer?.ok || answer.imported !== agents.length) throw new Error(`import failed: ${JSON.stringify(answer)}`);
}

export interface TestServerOptions {
  /** AGENTD_* settings on top of the test defaults; a function is called when the server starts, for values known only then (another service's URL). */
  env?: Record<string, string> | (() => Record<string, string>);
  /** Agents to load before the first test (see startTestServer). */
  agents?: readonly AgentRecord[];
}

/**
 * One server for the enclosing describe: started in beforeAll, closed in
 * afterAll. The handle delegates to that server, so tests write
 * `server.call(...)` as with startTestServer; touching it outside a test or
 * hook (before beforeAll ran) throws.
 */
export function useTestServer(options: TestServerOptions = {}): TestServer {
  let current: TestServer | undefined;
  beforeAll(async () => {
    const env = typeof options.env === "function" ? options.env() : options.env;
    current = await startTestServer(env, options.agents);
  });
  afterAll(async () => {
    await current?.close();
    current = undefined;
  });
  const started = (): TestServer => {
    if (current === undefined) throw new Error("the test server runs only between this describe's beforeAll and afterAll");
    return current;
  };
  return {
    get url() {
      return started().url;
    },
    get config() {
      return started().config;
    },
    get running() {
      return started().running;
    },
    get ca() {
      return started().ca;
    },
    get dispatcher() {
      return started().dispatcher;
    },
    call: (method, pathAndQuery, callOptions) => started().call(method, pathAndQuery, callOptions),
    createToken: (acls, ttlSeconds) => started().createToken(acls, ttlSeconds),
    revokeToken: (token) => started().revokeToken(token),
    // afterAll closes it; a test closing it early leaves afterAll nothing to do.
    close: async () => {
      await current?.close();
      current = undefined;
    },
  };
}
