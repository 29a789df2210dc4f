// Bad-input fuzzer: thousands of generated, hostile requests against the real
// server (HTTPS, PGlite, response validation on), written byte for byte on
// raw TLS sockets so nothing normalises them on the way.
//
// Seeded and reproducible: AGENTD_FUZZ_SEED=<n> replays a run (fast-check
// prints the seed and the shrunk counterexample on failure);
// AGENTD_FUZZ_BATCHES scales the main property (16 requests per batch).
import fc from "fast-check";
import { BASE_PATH } from "../server/contract.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectValid, loadContract } from "./helpers/contract.js";
import {
  LOGGED_IN,
  LOGGED_OUT,
  UNKNOWN_NUMBERS,
  looseDecode,
  malformedSpec,
  render,
  renderMalformed,
  requestSpec,
  type RequestSpec,
  type TokenName,
} from "./helpers/fuzz-arbitraries.js";
import { RawHttpsClient, header, requestBytes, type RawAnswer, type RawRequest } from "./helpers/raw-https.js";
import { suiteAgents } from "./helpers/agents.js";
import { ADMIN_TOKEN, useTestServer } from "./helpers/server.js";

const SEED = Number(process.env.AGENTD_FUZZ_SEED ?? 17_052_024);
const BATCHES = Number(process.env.AGENTD_FUZZ_BATCHES ?? 320);
const BATCH_SIZE = 16;
const IN_FLIGHT = 8;

const contract = loadContract();
const errorSchema = contract.schemaValidator("Error");
const listSchema = contract.responseValidator("listAgents", 200);
const agentSchema = contract.schemaValidator("AgentStatus");

const READ_ACLS = ["agentd.agents.read", "agentd.agents.by-id.*.read", "agentd.agents.by-number.*.read"];

/** Runs `fn` over `items` with at most `limit` in flight, answers in order. */
async function pooled<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

function describeAnswer(answer: RawAnswer): string {
  return `${answer.status} ${JSON.stringify(answer.headers)} ${answer.body.subarray(0, 500).toString("utf8")}`;
}

describe("bad input: the fuzzer", () => {
  const server = useTestServer({ agents: suiteAgents() });
  let client: RawHttpsClient;
  let tokens: Record<TokenName, string>;
  let sent = 0;
  const statuses = new Map<number, number>();

  async function send(request: RawRequest): Promise<RawAnswer> {
    sent++;
    const answer = await client.send(request);
    statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    return answer;
  }

  /** The whole observable store; also proves the server still answers. */
  async function snapshot(): Promise<unknown[]> {
    const answer = await server.call("GET", "/agents");
    expect(answer.status, answer.text).toBe(200);
    return expectValid(listSchema, answer.json, "GET /agents") as unknown[];
  }

  // Runs after useTestServer's beforeAll: hooks run in the order they are registered.
  beforeAll(async () => {
    const url = new URL(server.url);
    client = new RawHttpsClient(url.hostname, Number(url.port), server.ca);
    const revoked = await server.createToken(["agentd.#"]);
    await server.revokeToken(revoked);
    tokens = {
      admin: ADMIN_TOKEN,
      reader: await server.createToken(READ_ACLS),
      // May pause and unpause only agents that cannot be (logged out or unknown),
      // so it reaches body validation and the store without ever succeeding.
      pauser: await server.createToken([
        ...READ_ACLS,
        ...[...LOGGED_OUT, ...UNKNOWN_NUMBERS].flatMap((n) => [`agentd.agents.by-number.${n}.pause.create`, `agentd.agents.by-number.${n}.unpause.create`]),
      ]),
      revoked,
    };
  });

  afterAll(() => {
    client?.close();
    const byStatus = [...statuses.entries()].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(" ");
    console.log(`fuzz: seed ${SEED}, ${sent} generated requests over ${client?.opened ?? 0} TLS connections; statuses ${byStatus}`);
  });

  /**
   * In the rejection property nothing may succeed at pausing or unpausing: the admin token
   * never goes with a POST whose target names a logged-in agent in any
   * encoding (the pauser token takes its place, and its ACL must refuse).
   */
  function cannotPause(spec: RequestSpec): RequestSpec {
    const admin = (spec.token.kind === "named" && spec.token.name === "admin") || (spec.token.kind === "duplicate" && spec.token.names.includes("admin"));
    const decoded = looseDecode(spec.target);
    if (admin && spec.method === "POST" && LOGGED_IN.some((n) => decoded.includes(n))) {
      return { ...spec, token: { kind: "named", name: "pauser" } };
    }
    return spec;
  }

  /** What the checks need to know about the request an answer belongs to. */
  interface Sent {
    method: string;
    hadBody: boolean;
    what: string;
  }

  const sentOf = (spec: RequestSpec): Omit<Sent, "what"> => ({
    method: spec.method,
    hadBody: spec.body.kind !== "none",
  });

  /** An answer of the application to a request that must not succeed at changing anything. */
  function checkRejection(sent: Sent, answer: RawAnswer): void {
    const what = `${sent.what} → ${describeAnswer(answer)}`;
    expect(answer.status, `no 5xx: ${what}`).toBeLessThan(500);
    if (answer.status === 200) {
      expect(sent.method, `only GET succeeds: ${what}`).toBe("GET");
      const body: unknown = JSON.parse(answer.body.toString("utf8"));
      expect(Array.isArray(body) ? listSchema(body) : agentSchema(body), `a 200 body is the contract's: ${what}`).toBe(true);
      return;
    }
    expect(answer.status >= 400 && answer.status < 500, `a 4xx or a documented success: ${what}`).toBe(true);
    if (sent.method === "HEAD") {
      expect(answer.body.length).toBe(0);
      return;
    }
    expect(header(answer, "content-type"), what).toMatch(/^application\/json\b/);
    let body: any;
    expect(() => (body = JSON.parse(answer.body.toString("utf8"))), `JSON error body: ${what}`).not.toThrow();
    expectValid(errorSchema, body, what);
    // A detail may only blame the body of a request that had one.
    for (const detail of body.details ?? []) {
      if (detail.location === "body") expect(sent.hadBody, `detail blames a body that was not sent: ${what}`).toBe(true);
    }
  }

  it(
    `answers ${BATCHES * BATCH_SIZE} hostile requests with a 4xx Error body or a documented success, never a 5xx, and changes nothing`,
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(requestSpec, { minLength: BATCH_SIZE, maxLength: BATCH_SIZE }), async (batch) => {
          const specs = batch.map(cannotPause);
          const before = await snapshot();
          const answers = await pooled(specs, IN_FLIGHT, (spec) => send(render(spec, tokens)));
          specs.forEach((spec, i) => checkRejection({ ...sentOf(spec), what: `${spec.method} ${spec.target.slice(0, 200)}` }, answers[i]!));
          expect(await snapshot(), "the store is unchanged by rejected requests").toEqual(before);
        }),
        // A stateful failure can take long to shrink: stop shrinking after a
        // while and report the smallest counterexample found so far. An
        // interrupted run that found nothing is a failure, never a silent
        // shorter run.
        { seed: SEED, numRuns: BATCHES, verbose: 0, interruptAfterTimeLimit: 300_000, markInterruptAsFailure: true },
      );
    },
    600_000,
  );

  it("applies every valid pause to exactly the targeted agent", async () => {
    const reason = fc.string({ unit: "binary", minLength: 1, maxLength: 80 }).filter((r) => !r.includes("\u0000"));
    const pause = fc.record({
      number: fc.constantFrom(...LOGGED_IN, ...LOGGED_OUT),
      token: fc.constantFrom("admin", "pause-all"),
      form: fc.constantFrom("no body", "empty body", "{}", "reason"),
      reason,
      contentType: fc.constantFrom("application/json", "application/json; charset=utf-8", "application/json;charset=UTF-8", "Application/JSON"),
      chunked: fc.boolean(),
      spaced: fc.boolean(),
    });
    const pauseAll = await server.createToken(["agentd.agents.by-number.*.pause.create"]);
    await fc.assert(
      fc.asyncProperty(pause, async (p) => {
        const before = (await snapshot()) as Array<Record<string, unknown>>;
        const json = p.form === "{}" ? "{}" : p.form === "reason" ? JSON.stringify({ reason: p.reason }) : p.form === "empty body" ? "" : undefined;
        // Whitespace around JSON is allowed; whitespace alone is not JSON (and not an empty body).
        const body = json === undefined ? undefined : Buffer.from(p.spaced && json !== "" ? ` \n${json}\t ` : json);
        const headers: Array<[string, string]> = [["host", "localhost"], ["x-auth-token", p.token === "admin" ? ADMIN_TOKEN : pauseAll]];
        if (body !== undefined) headers.push(["content-type", p.contentType]);
        let payload = body;
        if (body !== undefined && p.chunked && body.length > 0) {
          headers.push(["transfer-encoding", "chunked"]);
          payload = Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from("\r\n0\r\n\r\n")]);
        } else if (body !== undefined) {
          headers.push(["content-length", String(body.length)]);
        }
        const answer = await send({ bytes: requestBytes("POST", `${BASE_PATH}/agents/by-number/${p.number}/pause`, headers, payload), head: false });
        const after = await snapshot();
        const expected = before.map((agent) => {
          if (agent.number !== p.number || !agent.logged) return agent;
          return { ...agent, paused: true, paused_reason: p.form === "reason" && json !== undefined && json !== "" ? p.reason : null };
        });
        if (LOGGED_IN.includes(p.number)) {
          expect(answer.status, describeAnswer(answer)).toBe(204);
          expect(answer.body.length).toBe(0);
        } else {
          expect(answer.status, describeAnswer(answer)).toBe(409);
          expectValid(contract.responseValidator("pauseAgentByNumber", 409), JSON.parse(answer.body.toString("utf8")));
        }
        expect(after).toEqual(expected);
      }),
      { seed: SEED, numRuns: 150, verbose: 0 },
    );
  });
  it("applies every valid unpause to exactly the targeted agent, paused or not", async () => {
    const unpause = fc.record({
      number: fc.constantFrom(...LOGGED_IN, ...LOGGED_OUT),
      // Paused first (with or without a reason) or not: an unpause of an agent that is not paused is a 204 that changes nothing.
      before: fc.constantFrom("as is", "paused", "paused with a reason"),
      token: fc.constantFrom("admin", "unpause-all"),
      // "no body" sends neither a body nor a Content-Type, as the 17.05 client does.
      form: fc.constantFrom("no body", "no body, Content-Type", "empty body", "{}"),
      contentType: fc.constantFrom("application/json", "application/json; charset=utf-8", "application/json;charset=UTF-8", "Application/JSON"),
      chunked: fc.boolean(),
      spaced: fc.boolean(),
    });
    const unpauseAll = await server.createToken(["agentd.agents.by-number.*.unpause.create"]);
    await fc.assert(
      fc.asyncProperty(unpause, async (p) => {
        if (p.before !== "as is" && LOGGED_IN.includes(p.number)) {
          const paused = await server.call("POST", `/agents/by-number/${p.number}/pause`, p.before === "paused" ? {} : { body: { reason: "fuzz" } });
          expect(paused.status, paused.text).toBe(204);
        }
        const before = (await snapshot()) as Array<Record<string, unknown>>;
        const json = p.form === "{}" ? "{}" : p.form === "empty body" ? "" : undefined;
        const body = json === undefined ? undefined : Buffer.from(p.spaced && json !== "" ? ` \n${json}\t ` : json);
        const headers: Array<[string, string]> = [["host", "localhost"], ["x-auth-token", p.token === "admin" ? ADMIN_TOKEN : unpauseAll]];
        if (body !== undefined || p.form === "no body, Content-Type") headers.push(["content-type", p.contentType]);
        let payload = body;
        if (body !== undefined && p.chunked && body.length > 0) {
          headers.push(["transfer-encoding", "chunked"]);
          payload = Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from("\r\n0\r\n\r\n")]);
        } else {
          headers.push(["content-length", String(body?.length ?? 0)]);
        }
        const answer = await send({ bytes: requestBytes("POST", `${BASE_PATH}/agents/by-number/${p.number}/unpause`, headers, payload), head: false });
        const after = await snapshot();
        const expected = before.map((agent) => (agent.number === p.number && agent.logged ? { ...agent, paused: false, paused_reason: null } : agent));
        if (LOGGED_IN.includes(p.number)) {
          expect(answer.status, describeAnswer(answer)).toBe(204);
          expect(answer.body.length).toBe(0);
        } else {
          expect(answer.status, describeAnswer(answer)).toBe(409);
          expectValid(contract.responseValidator("unpauseAgentByNumber", 409), JSON.parse(answer.body.toString("utf8")));
        }
        expect(after).toEqual(expected);
      }),
      { seed: SEED, numRuns: 150, verbose: 0 },
    );
  });

  it("answers malformed HTTP with a 4xx Error body, and stays up", async () => {
    await fc.assert(
      fc.asyncProperty(malformedSpec, async (spec) => {
        const before = await snapshot();
        const what = `${spec.flaw} ${JSON.stringify(spec.detail)}`;
        let answer: RawAnswer | Error;
        try {
          answer = await send({ bytes: renderMalformed(spec, ADMIN_TOKEN), head: false, once: true });
        } catch (err) {
          answer = err as Error;
        }
        if (answer instanceof Error) throw new Error(`${what}: no answer (${answer.message})`);
        // Whether Node's parser refused it (serve.ts answers those itself, then
        // closes) or the application did, the contract's rules apply.
        const post = spec.flaw === "content-length" || spec.flaw === "framing";
        checkRejection({ method: post ? "POST" : "GET", hadBody: post, what }, answer);
        if (answer.status === 431 || answer.status === 408) expect(answer.closed, what).toBe(true);
        expect(await snapshot(), `the store is unchanged by ${what}`).toEqual(before);
      }),
      { seed: SEED, numRuns: 250, verbose: 0 },
    );
  });
});
