// Rate budgets that no other client's requests can use up, through real
// parts (server/http/rate-limit.ts, the auth service's check cap in
// server/auth/external.ts): a valid token that was never used gets 200 right
// after a burst of made-up tokens from the same address, with embedded
// tokens and with an external auth service; a made-up token repeated runs
// out of its own budget; and a flood of made-up tokens sends the auth
// service no more checks than AGENTD_AUTH_CHECK_BURST and _RATE allow, the
// rest answered 429 with Retry-After at once. The cap is counted against
// the time the flood took, so the file runs beside the others.
import { describe, expect, it } from "vitest";
import { AuthService } from "../devkit/auth-service.js";
import { SUITE_AGENTS } from "./helpers/agents.js";
import { ADMIN_TOKEN, startTestServer, type Answer, type TestServer } from "./helpers/server.js";

/** The one agent every server here holds: what the requests read. */
const AGENT = SUITE_AGENTS.pausable;
const PATH = `/agents/by-number/${AGENT.number}`;
/** As in the report that found the lockout: two a second, no more at once. */
const TIGHT = { AGENTD_RATE_LIMIT: "2", AGENTD_RATE_BURST: "2" };

const get = (server: TestServer, token: string | null): Promise<Answer> => server.call("GET", PATH, { token });
const statuses = async (server: TestServer, tokens: (string | null)[]): Promise<number[]> => {
  const out: number[] = [];
  for (const token of tokens) out.push((await get(server, token)).status);
  return out;
};

/** Sends `token` until the answer is 429 (or a bound that a budget of two a second never reaches); the last answer. */
async function untilLimited(server: TestServer, token: string | null): Promise<Answer> {
  let answer = await get(server, token);
  for (let i = 0; i < 20 && answer.status !== 429; i++) answer = await get(server, token);
  return answer;
}

function expectTooMany(answer: Answer): void {
  expect(answer.status).toBe(429);
  expect(answer.json).toEqual({ error: "too many requests" });
  expect(Number(answer.headers["retry-after"])).toBeGreaterThanOrEqual(1);
}

describe("embedded tokens", () => {
  it("a valid token never used before gets 200 right after a burst of made-up tokens from its address", async () => {
    const server = await startTestServer(TIGHT, [AGENT]);
    try {
      expect(await statuses(server, ["made-up-1", "made-up-2", "made-up-3", "made-up-4"])).toEqual([401, 401, 401, 401]);
      // Its first request.
      expect((await get(server, ADMIN_TOKEN)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it("a made-up token repeated, and a valid one overused, each run out of their own budget only", async () => {
    const server = await startTestServer(TIGHT, [AGENT]);
    try {
      const other = await server.createToken(["agentd.#"]);
      expectTooMany(await untilLimited(server, "made-up"));
      // Requests without a token share the address's budget, which is theirs alone.
      expectTooMany(await untilLimited(server, null));
      expectTooMany(await untilLimited(server, other));
      // Another valid token from the same address, never used, is not held back by any of them.
      expect((await get(server, ADMIN_TOKEN)).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe("an external auth service", () => {
  const valid = "external-valid-token-0123456789";
  const fresh = "external-fresh-token-9876543210";

  async function withAuth(env: Record<string, string>, fn: (server: TestServer, auth: AuthService) => Promise<void>): Promise<void> {
    const auth = new AuthService(new Map([[valid, ["agentd.#"]], [fresh, ["agentd.#"]]]));
    await auth.start();
    const server = await startTestServer({ AGENTD_AUTH_URL: auth.url, AGENTD_ADMIN_TOKEN: "", ...env }, [AGENT]);
    try {
      await fn(server, auth);
    } finally {
      await server.close();
      await auth.stop();
    }
  }

  it("a valid token never used before gets 200 right after a burst of made-up tokens from its address", async () => {
    await withAuth(TIGHT, async (server) => {
      expect(await statuses(server, ["made-up-1", "made-up-2", "made-up-3", "made-up-4"])).toEqual([401, 401, 401, 401]);
      expect((await get(server, valid)).status).toBe(200);
    });
  });

  it("a flood of made-up tokens sends no more checks than the cap allows; the rest get 429 at once", async () => {
    const CHECK_RATE = 5;
    const CHECK_BURST = 100;
    const FLOOD = 160;
    await withAuth({ AGENTD_RATE_LIMIT: "0", AGENTD_AUTH_CHECK_RATE: String(CHECK_RATE), AGENTD_AUTH_CHECK_BURST: String(CHECK_BURST) }, async (server, auth) => {
      // Checked (and cached) before the flood.
      expect((await get(server, valid)).status).toBe(200);

      const started = performance.now();
      const answers = await Promise.all(
        Array.from({ length: FLOOD }, (_, i) => get(server, `made-up-token-${i}-${Math.random()}`)),
      );
      const seconds = Math.ceil((performance.now() - started) / 1000);
      const checks = auth.requests.filter((r) => r.token.startsWith("made-up-token-")).length;
      const unauthorized = answers.filter((a) => a.status === 401).length;
      const limited = answers.filter((a) => a.status === 429);

      // Every 401 is one check the service answered; nothing else reached it.
      expect(checks).toBe(unauthorized);
      // With the valid token's check: the burst was used, and no more than the burst and the rate.
      expect(auth.requests.length).toBe(checks + 1);
      expect(auth.requests.length).toBeGreaterThanOrEqual(CHECK_BURST);
      expect(auth.requests.length).toBeLessThanOrEqual(CHECK_BURST + CHECK_RATE * seconds);
      expect(unauthorized + limited.length).toBe(FLOOD);
      expect(limited.length).toBeGreaterThan(0);
      for (const answer of limited) expectTooMany(answer);

      // A token the cache knows needs no check: served at once.
      expect((await get(server, valid)).status).toBe(200);
      const metrics = await (await fetch(`${server.running.opsUrl}/metrics`)).text();
      expect(metrics).toMatch(new RegExp(`^agentd_auth_checks_total\\{result="throttled"\\} ${limited.length}$`, "m"));
    });
  });
});
