// A flood of made-up tokens must not take the service down, through real
// parts: many distinct made-up tokens from one client share that client's
// rate budget, so 429 comes, the token checks (database or external auth
// service) stay within the budget, and a token already known to be valid
// keeps its own budget. With embedded tokens and with an external auth
// service. The budget is counted against the time the flood took, so the
// file runs beside the others.
import { describe, expect, it } from "vitest";
import { AuthService } from "../devkit/auth-service.js";
import { SUITE_AGENTS } from "./helpers/agents.js";
import { startTestServer, type Answer, type TestServer } from "./helpers/server.js";

/** The one agent every server here holds: what the valid requests read. */
const AGENT = SUITE_AGENTS.pausable;
const RATE = 5;
const BURST = 10;
const MADE_UP = 120;

/**
 * Sends MADE_UP requests one after the other, each with its own made-up
 * token, and returns the answers and how many whole seconds they took (the
 * budget refills RATE per second meanwhile).
 */
async function madeUpTokenFlood(server: TestServer): Promise<{ answers: Answer[]; seconds: number }> {
  const started = performance.now();
  const answers: Answer[] = [];
  for (let i = 0; i < MADE_UP; i++) {
    answers.push(await server.call("GET", `/agents/by-number/${AGENT.number}`, { token: `made-up-token-${i}-${Math.random()}` }));
  }
  return { answers, seconds: Math.ceil((performance.now() - started) / 1000) };
}

function expectBudgetHeld(answers: Answer[], seconds: number): number {
  const statuses = new Set(answers.map((a) => a.status));
  expect([...statuses].sort()).toEqual([401, 429]);
  const limited = answers.filter((a) => a.status === 429);
  for (const answer of limited) {
    expect(answer.json).toEqual({ error: "too many requests" });
    expect(Number(answer.headers["retry-after"])).toBeGreaterThanOrEqual(1);
  }
  // Every 401 is a token check: no more than the client's budget over the flood.
  const checked = answers.filter((a) => a.status === 401).length;
  expect(checked).toBeLessThanOrEqual(BURST + RATE * seconds);
  return checked;
}

describe("made-up tokens share their client's rate budget", () => {
  it("embedded tokens: 429 comes, lookups stay within the budget, a known-valid token keeps its own", async () => {
    const server = await startTestServer({ AGENTD_RATE_LIMIT: String(RATE), AGENTD_RATE_BURST: String(BURST) }, [AGENT]);
    try {
      // Known valid before the flood: counted by token from now on.
      expect((await server.call("GET", `/agents/by-number/${AGENT.number}`)).status).toBe(200);
      const { answers, seconds } = await madeUpTokenFlood(server);
      expectBudgetHeld(answers, seconds);
      expect((await server.call("GET", `/agents/by-number/${AGENT.number}`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it("external auth service: 429 comes, and the service receives at most the client's budget of checks", async () => {
    const valid = "external-valid-token-0123456789";
    const auth = new AuthService(new Map([[valid, ["agentd.#"]]]));
    await auth.start();
    const server = await startTestServer({
      AGENTD_AUTH_URL: auth.url,
      AGENTD_ADMIN_TOKEN: "",
      AGENTD_RATE_LIMIT: String(RATE),
      AGENTD_RATE_BURST: String(BURST),
    }, [AGENT]);
    try {
      expect((await server.call("GET", `/agents/by-number/${AGENT.number}`, { token: valid })).status).toBe(200);
      const { answers, seconds } = await madeUpTokenFlood(server);
      const checked = expectBudgetHeld(answers, seconds);
      const upstream = auth.requests.filter((r) => r.token.startsWith("made-up-token-"));
      expect(upstream).toHaveLength(checked);
      expect((await server.call("GET", `/agents/by-number/${AGENT.number}`, { token: valid })).status).toBe(200);
    } finally {
      await server.close();
      await auth.stop();
    }
  });
});
