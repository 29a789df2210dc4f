import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pino } from "pino";
import { Agent } from "undici";
import { adminSocketPath, callAdminChannel } from "../../server/admin/channel.js";
import type { Config } from "../../server/config/config.js";
import { loadConfig } from "../../server/config/load.js";
import { openPostgres } from "../../server/db/postgres.js";
import { startServer, type RunningServer } from "../../server/serve.js";
import { SqlTokenStore } from "../../server/store/sql-token-store.js";
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
 * the caller passes its own environment.
 */
export async function startTestServer(env: Record<string, string> = {}): Promise<TestServer> {
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
    running = await startServer(config, pino({ level: config.logLevel }));
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

  return {
    url: running.url,
    config,
    running,
    ca,
    dispatcher,
    call,
    async createToken(acls, ttlSeconds = null) {
      if (config.databaseUrl) return tokens((store) => store.create(acls, ttlSeconds));
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
}
