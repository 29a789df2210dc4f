// The warm-up (server/http/warm-up.ts) in process: it goes through the whole
// request path of createApp for every operation of the contract, and leaves
// nothing behind: no store or token verifier called, no log line, no metric,
// no rate-limit budget spent. An ordinary request is not let through by it.
import { Writable } from "node:stream";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { describe, expect, it, vi } from "vitest";
import type { TokenVerifier } from "../server/auth/verifier.js";
import { BASE_PATH, CONTRACT } from "../server/contract.js";
import { createApp } from "../server/http/app.js";
import { warmUp } from "../server/http/warm-up.js";
import type { Metrics } from "../server/ops/metrics.js";
import type { AgentStore } from "../server/store/agent-store.js";

/** Records every call made on any of its methods. */
function recorder<T extends object>(calls: string[], name: string): T {
  return new Proxy({} as T, {
    get: (_target, property) => {
      if (property === "then") return undefined;
      return (..._args: unknown[]) => {
        calls.push(`${name}.${String(property)}`);
        return Promise.reject(new Error(`${name}.${String(property)} called`));
      };
    },
  });
}

function setUp(rateLimit: { perSecond: number; burst: number } | null) {
  const calls: string[] = [];
  const logged: string[] = [];
  const logger = pino(
    { level: "trace" },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        logged.push(chunk.toString());
        done();
      },
    }),
  );
  const metrics: Metrics = {
    httpRequest: (operation, status) => calls.push(`metrics.httpRequest ${operation} ${status}`),
    dbQuery: () => calls.push("metrics.dbQuery"),
    authCheck: (result) => calls.push(`metrics.authCheck ${result}`),
    authCacheHit: () => calls.push("metrics.authCacheHit"),
    rateLimited: () => calls.push("metrics.rateLimited"),
  };
  const app = createApp({
    config: { validateResponses: true, bodyLimitBytes: 16 * 1024, rateLimit, corsOrigins: [], tlsCert: null },
    store: recorder<AgentStore>(calls, "store"),
    verifier: recorder<TokenVerifier>(calls, "verifier"),
    logger,
    metrics,
  });
  return { app, calls, logged };
}

describe("warmUp", () => {
  it("sends every operation through the validator and leaves no trace: no store, no verifier, no log, no metric, no rate-limit budget", async () => {
    // A budget of one request: counted, the warm-up's requests would be refused with 429.
    const { app, calls, logged } = setUp({ perSecond: 1, burst: 1 });
    await warmUp(app, CONTRACT, BASE_PATH);
    expect(calls).toEqual([]);
    expect(logged).toEqual([]);
  });

  it("sends one request per operation and way of sending its body, with the contract's example path values", async () => {
    const { app } = setUp(null);
    const seen: string[] = [];
    const watched = ((req: { method: string; url: string; headers: Record<string, string> }, res: unknown) => {
      seen.push(`${req.method} ${req.url}${req.headers["content-type"] ? ` ${req.headers["content-type"]}` : ""}`);
      return (app as unknown as (q: unknown, s: unknown) => void)(req, res);
    }) as unknown as typeof app;
    await warmUp(watched, CONTRACT, BASE_PATH);
    expect(seen.sort()).toEqual(
      [
        "GET /1.0/agents",
        "GET /1.0/agents/by-id/1",
        "GET /1.0/agents/by-number/1001",
        "POST /1.0/agents/by-number/1001/pause",
        "POST /1.0/agents/by-number/1001/pause application/json",
        "POST /1.0/agents/by-number/1001/unpause",
        "POST /1.0/agents/by-number/1001/unpause application/json",
      ].sort(),
    );
  });

  it("an ordinary request after it is checked as ever: no token is a 401, counted and logged", async () => {
    const { app, calls, logged } = setUp(null);
    await warmUp(app, CONTRACT, BASE_PATH);
    // Over a real listener: given an Express app, light-my-request would rewire
    // Express's request prototype for every app of this process (server/http/warm-up.ts).
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const response = await fetch(`http://127.0.0.1:${port}${BASE_PATH}/agents`);
      await response.text();
      expect(response.status).toBe(401);
      await vi.waitFor(() => expect(calls).toContain("metrics.httpRequest listAgents 401"));
      expect(logged.join("")).toContain(`"url":"${BASE_PATH}/agents"`);
    } finally {
      await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    }
  });

  it("fails loudly when a warm-up request is refused instead of set up", async () => {
    const { app } = setUp(null);
    const broken = structuredClone(CONTRACT) as { paths: Record<string, unknown> };
    broken.paths["/no-such-route-in-the-app"] = { get: { operationId: "nothing", responses: { "200": { description: "never" } } } };
    // The validator only knows the real contract: this path is not one of its routes.
    await expect(warmUp(app, broken, BASE_PATH)).rejects.toThrow(/warm-up request GET \/1\.0\/no-such-route-in-the-app answered 404/);
  });
});
