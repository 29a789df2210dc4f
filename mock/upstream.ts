// Behind Prism: the service's own code, in this process, holding the
// stateful mock's state. The app is the server's (createApp: validation,
// handlers, the contract's errors), its store the server's SQL store on a
// PGlite held in memory, and its events the server's relay and sinks: the
// rules of a pause are never written a second time. Only two things differ
// from a deployment, and both are the mock's promise to front ends: any
// non-empty token is accepted with every permission, and it listens on
// plain HTTP on loopback, for Prism alone.
import http from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import type { Logger } from "pino";
import type { TokenVerifier } from "../server/auth/verifier.js";
import type { Config } from "../server/config/config.js";
import { BASE_PATH } from "../server/contract.js";
import { migrate } from "../server/db/migrations.js";
import { openPglite } from "../server/db/pglite.js";
import { startDelivery } from "../server/events/delivery.js";
import { dropSinkEvents } from "../server/events/outbox-sinks.js";
import type { Relay } from "../server/events/relay.js";
import { sinkNames } from "../server/events/sink.js";
import { createApp } from "../server/http/app.js";
import { CachedAgentStore } from "../server/store/cached-agent-store.js";
import { readOriginUuid } from "../server/store/deployment.js";
import type { AgentRecord, AgentStatus } from "../server/store/agent-store.js";
import { SqlAgentStore } from "../server/store/sql-agent-store.js";
import type { Fleet } from "./fleet.js";
import { forcing, withoutQueryForms } from "./prefer.js";
import { createRequestGate } from "./request-gate.js";

/** The validator refuses a missing or empty token before asking; any other is good for everything. */
const ANY_TOKEN: TokenVerifier = { verify: () => Promise.resolve({ ok: true }) };

/**
 * Prism's proxy mocks a request itself ("remocks") when the upstream answers
 * 501. A request that forces an answer (`Prefer: code=…`, `?__code=…`:
 * prefer.ts) is answered that way, so a forced answer changes no state.
 * Only once the contract has accepted it (`answer`, createApp's
 * `beforeHandlers`): a path or method off the contract gets the server's
 * 404 or 405, which Prism could not remock (it answered 500), and a bad
 * token, parameter or body the server's answer, naming the real field.
 * `mark`, before the app, tells the forced requests and takes Prism's query
 * forms off them, which the server would refuse as unknown parameters.
 */
function forcedAnswersToPrism(): { mark: express.RequestHandler; answer: express.RequestHandler } {
  const forced = new WeakSet<object>();
  return {
    mark: (req, _res, next) => {
      if (forcing(req.get("prefer"), req.originalUrl) !== null) {
        forced.add(req);
        req.url = withoutQueryForms(req.url);
      }
      next();
    },
    answer: (req, res, next) => {
      if (forced.has(req)) res.status(501).end();
      else next();
    },
  };
}

export interface MockUpstream {
  /** `http://127.0.0.1:<port>/1.0`: what Prism forwards to. */
  url: string;
  /**
   * Puts every agent back as it was at start and drops the events not yet
   * delivered, as a fresh start would have none; sends no event of its own.
   * Deliveries under way end first (delivered or not), so no event
   * recorded before it is sent after it; and it runs alone: requests that
   * reached the service are answered first, the ones that come meanwhile
   * wait for it.
   */
  reset(): Promise<void>;
  close(): Promise<void>;
}

export async function startMockUpstream(config: Config, fleet: Fleet, logger: Logger): Promise<MockUpstream> {
  const db = await openPglite(null);
  let relay: Relay | null = null;
  try {
    await migrate(db);
    const recording = { sinks: sinkNames(config.events), recorded: () => relay?.wake() };
    const sql = new SqlAgentStore(db, await readOriginUuid(db, fleet.originUuid), recording);
    await sql.upsert(fleet.agents);
    const store = new CachedAgentStore(sql);
    relay = await startDelivery(config.events, db, logger, null);
    const gate = createRequestGate();

    const app = express();
    app.disable("x-powered-by");
    app.use(gate.middleware);
    const forced = forcedAnswersToPrism();
    app.use(forced.mark);
    app.use(createApp({ config: { ...config, rateLimit: null, corsOrigins: [] }, store, verifier: ANY_TOKEN, logger, beforeHandlers: forced.answer }));
    const server = http.createServer(app);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", resolve);
    });
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}${BASE_PATH}`,
      async reset() {
        // Stopped before the gate closes, so the requests do not wait for a
        // slow receiver; and not only emptied afterwards: a relay delivers a
        // round's rows from memory, so deleting them would not stop those.
        // Events recorded meanwhile are from before the reset: dropped below.
        await relay?.stop();
        await gate.alone(async () => {
          // A reset that ran meanwhile started another.
          await relay?.stop();
          relay = null;
          try {
            // Only the agents that changed, through the cached store (which
            // then reads them again): no dead copy of every row is left
            // behind in the database.
            const changed = changedAgents(await store.list(), fleet.agents);
            if (changed.length > 0) await store.upsert(changed);
            for (const sink of recording.sinks) await dropSinkEvents(db, sink);
          } finally {
            // Even after a failure: without a relay the events would pile up unsaid.
            relay = await startDelivery(config.events, db, logger, null).catch((err: unknown) => {
              logger.error({ err }, "the mock's event relay did not start again after a reset: no event is delivered until the next one");
              return null;
            });
          }
        });
      },
      async close() {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
        // After a reset under way, which would otherwise start a relay on a closed database.
        await gate.alone(async () => {
          await relay?.stop();
          await db.close();
        });
      },
    };
  } catch (err) {
    await relay?.stop().catch(() => undefined);
    await db.close().catch(() => undefined);
    throw err;
  }
}

/** The agents of `start` whose record differs from (or is missing in) `now`. */
function changedAgents(now: readonly AgentStatus[], start: readonly AgentRecord[]): AgentRecord[] {
  const held = new Map(now.map((agent) => [agent.id, agent]));
  return start.filter((agent) => {
    const current = held.get(agent.id);
    return current === undefined || (Object.keys(agent) as (keyof AgentRecord)[]).some((field) => current[field] !== agent[field]);
  });
}
