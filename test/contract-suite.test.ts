// One contract suite, three targets. The behaviour tests are written once,
// through the typed client, and run against:
//
//   server  the real server (HTTPS, fresh PGlite loaded with SUITE_AGENTS, test tokens),
//   mock    a real `prism mock openapi.yaml` process,
//   proxy   `prism proxy openapi.yaml <server> --errors` in front of a real
//           server; after every test the suite fails on anything Prism
//           flagged (sl-violations header, a Prism problem+json answer, a
//           violation or error line in its log).
//
// Each test names the targets it runs on and the (operation, status) pairs
// it exercises. A target's describe only holds its own tests; the last
// describe proves, per target, that every status the contract documents is
// exercised or is listed in UNREACHABLE with the reason.
//
// Tests whose title starts with "(state)" assert what only a target with
// real data and real tokens can know (which agents exist, what a pause
// changed, which token may do what): they run on server and proxy. The mock
// answers with the contract's examples whatever the path, so it is checked
// for status and shape, and errors that depend on state come from
// `Prefer: code=…`.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { dump, load } from "js-yaml";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { toResult, type AgentdClient, type AgentdResult, type AgentStatus, type ApiError } from "../client/index.js";
import { contractPath, expectValid, loadContract } from "./helpers/contract.js";
import { operations, type OperationId } from "../generated/operations.js";
import { freePort } from "../devkit/ports.js";
import { startTarget, type Target, type TargetName } from "./helpers/targets.js";
import { SUITE_AGENTS, suiteAgents } from "./helpers/agents.js";

const contract = loadContract();
// Loaded into the server behind the server and proxy targets; the mock answers with the contract's examples whatever the number.
const { pausable, away, onBreak, pausedSilently, bystander, offline } = SUITE_AGENTS;

type Cover = readonly [OperationId, number];

const ALL: readonly TargetName[] = ["server", "mock", "proxy"];
const STATEFUL: readonly TargetName[] = ["server", "proxy"];

/**
 * Documented statuses a target cannot produce, and why. The coverage test
 * fails when a status is neither exercised nor listed here, or is both.
 */
const UNREACHABLE: Record<TargetName, Partial<Record<OperationId, Record<number, string>>>> = (() => {
  const noFault = "500 needs a server fault; no request makes a correct server fail (fault injection lives in the store suite)";
  const server = {
    listAgents: { 500: noFault },
    getAgentById: { 500: noFault },
    getAgentByNumber: { 500: noFault },
    pauseAgentByNumber: { 500: noFault },
    unpauseAgentByNumber: { 500: noFault },
  };
  const proxy = {
    listAgents: { 500: noFault },
    getAgentById: { 500: noFault },
    getAgentByNumber: { 500: noFault },
    pauseAgentByNumber: {
      500: noFault,
      413: "Prism parses and re-serialises a JSON body before forwarding it, so an oversized valid body arrives small, and an invalid one is rejected by Prism itself",
      415: "Prism rejects a non-JSON body itself (its own 422 problem+json) and never forwards it",
    },
    unpauseAgentByNumber: {
      500: noFault,
      413: "Prism parses and re-serialises a JSON body before forwarding it, so an oversized valid body arrives small, and an invalid one is rejected by Prism itself",
      415: "Prism rejects a non-JSON body itself (its own 422 problem+json) and never forwards it",
    },
  };
  return { server, proxy, mock: {} };
})();

// Registry filled while the describes below are collected, read by the coverage test.
const covered: Record<TargetName, Set<string>> = { server: new Set(), mock: new Set(), proxy: new Set() };
const key = (operationId: string, status: number | string): string => `${operationId} ${status}`;

// ---------------------------------------------------------------------------
// Assertions shared by every test

/** Checks the status and validates the body against what the contract documents for it; returns the body. */
function expectResult<T>(result: AgentdResult<T>, operationId: OperationId, status: number): T | ApiError {
  const body = result.ok ? result.data : result.error;
  expect(result.status, JSON.stringify(body)).toBe(status);
  if (status === 204) {
    expect(result.ok && result.data).toBeUndefined();
    return undefined as T;
  }
  if (!result.ok) expect(result.error.error, "a contract Error body, not a foreign one").not.toMatch(/^unexpected response/);
  return expectValid(contract.responseValidator(operationId, status), body, key(operationId, status));
}

function expectError<T>(result: AgentdResult<T>, operationId: OperationId, status: number, error: string): ApiError {
  const body = expectResult(result, operationId, status) as ApiError;
  expect(body.error).toBe(error);
  return body;
}

function expectOk<T>(result: AgentdResult<T>, operationId: OperationId, status = 200): T {
  return expectResult(result, operationId, status) as T;
}

/** POSTs a pause with a body the typed method cannot send (malformed, foreign media type, extra fields). */
async function pauseRaw(client: AgentdClient, number: string, body: string, contentType = "application/json") {
  return toResult(
    await client.raw.POST("/agents/by-number/{agent_number}/pause", {
      params: { path: { agent_number: number } },
      body: body as never,
      bodySerializer: (b: unknown) => b as string,
      headers: { "Content-Type": contentType },
    }),
  );
}

/** POSTs an unpause with a body (the typed method sends none). */
async function unpauseRaw(client: AgentdClient, number: string, body: string, contentType = "application/json") {
  return toResult(
    await client.raw.POST("/agents/by-number/{agent_number}/unpause", {
      params: { path: { agent_number: number } },
      body: body as never,
      bodySerializer: (b: unknown) => b as string,
      headers: { "Content-Type": contentType },
    }),
  );
}

/** Each operation once, on a given agent, through the typed client. */
function everyOperation(client: AgentdClient, id = pausable.id, number = pausable.number): [OperationId, () => Promise<AgentdResult<unknown>>][] {
  return [
    ["listAgents", () => client.listAgents()],
    ["getAgentById", () => client.getAgentById(id)],
    ["getAgentByNumber", () => client.getAgentByNumber(number)],
    ["pauseAgentByNumber", () => client.pauseAgentByNumber(number, "contract suite")],
    ["unpauseAgentByNumber", () => client.unpauseAgentByNumber(number)],
  ];
}

// ---------------------------------------------------------------------------
// The suite, once per target

describe.each(ALL.map((name) => ({ name })))("contract suite on the $name", ({ name }) => {
  let target: Target;

  /** Registers a test only on the targets it applies to, and records what it covers. */
  const check = (on: readonly TargetName[], title: string, covers: readonly Cover[], fn: () => Promise<void>): void => {
    if (!on.includes(name)) return;
    for (const [operationId, status] of covers) covered[name].add(key(operationId, status));
    it(title, fn);
  };

  beforeAll(async () => {
    target = await startTarget(name, { agents: suiteAgents() });
  });
  afterAll(async () => {
    await target?.close();
  });
  // Proxy: any violation Prism reported during the test fails it.
  afterEach(() => {
    if (target) expect(target.takeViolations(), "contract violations reported by Prism").toEqual([]);
  });

  // --- success -------------------------------------------------------------

  check(ALL, "listAgents answers 200 with a list of contract AgentStatus objects", [["listAgents", 200]], async () => {
    const list = expectOk(await target.client().listAgents(), "listAgents");
    expect(list.length).toBeGreaterThan(0);
  });

  check(STATEFUL, "(state) listAgents returns exactly the agents the suite loaded, in id order, all with the deployment's origin_uuid", [], async () => {
    const list = expectOk(await target.client().listAgents(), "listAgents");
    expect(list.map(({ origin_uuid: _, ...agent }) => agent)).toEqual(suiteAgents());
    expect(list.map((a) => a.id)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(new Set(list.map((a) => a.origin_uuid)).size).toBe(1);
    expect(list.find((a) => a.number === away.number)).toMatchObject({ logged: false, paused: false, extension: null, context: null, state_interface: null });
    expect(list.find((a) => a.number === onBreak.number)).toMatchObject({ logged: true, paused: true, paused_reason: "lunch break" });
    expect(list.find((a) => a.number === pausedSilently.number)).toMatchObject({ logged: true, paused: true, paused_reason: null });
  });

  check(ALL, "getAgentById and getAgentByNumber answer 200 with one contract AgentStatus", [["getAgentById", 200], ["getAgentByNumber", 200]], async () => {
    const client = target.client();
    expectOk(await client.getAgentById(onBreak.id), "getAgentById");
    expectOk(await client.getAgentByNumber(onBreak.number), "getAgentByNumber");
  });

  check(STATEFUL, "(state) by id, by number and in the list, an agent is the same", [], async () => {
    const client = target.client();
    const list = expectOk(await client.listAgents(), "listAgents");
    for (const agent of list) {
      expect(expectOk(await client.getAgentById(agent.id), "getAgentById")).toEqual(agent);
      expect(expectOk(await client.getAgentByNumber(agent.number), "getAgentByNumber")).toEqual(agent);
    }
  });

  check(ALL, "pauseAgentByNumber answers 204 with no body: with a reason, without a body, with an empty object", [["pauseAgentByNumber", 204]], async () => {
    const client = target.client();
    expectResult(await client.pauseAgentByNumber(bystander.number, "lunch break"), "pauseAgentByNumber", 204);
    expectResult(await client.pauseAgentByNumber(bystander.number), "pauseAgentByNumber", 204);
    expectResult(await pauseRaw(client, bystander.number, "{}"), "pauseAgentByNumber", 204);
  });

  check(STATEFUL, "(state) a pause is visible on the next read: the reason is set, replaced, and cleared without one", [], async () => {
    const client = target.client();
    const read = async (): Promise<AgentStatus> => expectOk(await client.getAgentByNumber(pausable.number), "getAgentByNumber");
    expect(await read()).toMatchObject({ logged: true, paused: false, paused_reason: null });

    expectResult(await client.pauseAgentByNumber(pausable.number, "coffee"), "pauseAgentByNumber", 204);
    expect(await read()).toMatchObject({ paused: true, paused_reason: "coffee" });
    expectResult(await client.pauseAgentByNumber(pausable.number, "training"), "pauseAgentByNumber", 204);
    expect(await read()).toMatchObject({ paused: true, paused_reason: "training" });
    expectResult(await client.pauseAgentByNumber(pausable.number), "pauseAgentByNumber", 204);
    const after = await read();
    expect(after).toMatchObject({ paused: true, paused_reason: null });
    // The list agrees with the single read.
    expect(expectOk(await client.listAgents(), "listAgents").find((a) => a.number === pausable.number)).toEqual(after);
  });

  check(ALL, "unpauseAgentByNumber answers 204 with no body: without a body, with an empty object, on a paused and an unpaused agent", [["unpauseAgentByNumber", 204]], async () => {
    const client = target.client();
    expectResult(await client.pauseAgentByNumber(bystander.number, "lunch break"), "pauseAgentByNumber", 204);
    expectResult(await client.unpauseAgentByNumber(bystander.number), "unpauseAgentByNumber", 204);
    expectResult(await client.unpauseAgentByNumber(bystander.number), "unpauseAgentByNumber", 204);
    expectResult(await unpauseRaw(client, bystander.number, "{}"), "unpauseAgentByNumber", 204);
  });

  check(STATEFUL, "(state) an unpause clears paused and paused_reason, and unpausing an agent that is not paused changes nothing", [], async () => {
    const client = target.client();
    const read = async (): Promise<AgentStatus> => expectOk(await client.getAgentByNumber(pausable.number), "getAgentByNumber");
    expectResult(await client.pauseAgentByNumber(pausable.number, "coffee"), "pauseAgentByNumber", 204);
    expect(await read()).toMatchObject({ paused: true, paused_reason: "coffee" });
    expectResult(await client.unpauseAgentByNumber(pausable.number), "unpauseAgentByNumber", 204);
    const after = await read();
    expect(after).toMatchObject({ logged: true, paused: false, paused_reason: null });
    expectResult(await unpauseRaw(client, pausable.number, "{}"), "unpauseAgentByNumber", 204);
    expect(await read()).toEqual(after);
    // The list agrees with the single read.
    expect(expectOk(await client.listAgents(), "listAgents").find((a) => a.number === pausable.number)).toEqual(after);
    // Paused without a reason: unpaused all the same.
    expectResult(await client.pauseAgentByNumber(pausable.number), "pauseAgentByNumber", 204);
    expect(await read()).toMatchObject({ paused: true, paused_reason: null });
    expectResult(await client.unpauseAgentByNumber(pausable.number), "unpauseAgentByNumber", 204);
    expect(await read()).toEqual(after);
  });

  // --- 400 -----------------------------------------------------------------

  check(["server", "mock"], "an invalid agent_id answers 400 invalid request", [["getAgentById", 400]], async () => {
    const client = target.client();
    for (const id of ["abc", 0, -1, 2147483648] as unknown as number[]) {
      expectError(await client.getAgentById(id), "getAgentById", 400, "invalid request");
    }
  });

  check(["server"], "(state) a 400 for agent_id names the parameter in details", [], async () => {
    const body = expectError(await target.client().getAgentById("abc" as unknown as number), "getAgentById", 400, "invalid request");
    expect(body.details).toContainEqual(expect.objectContaining({ location: "path", path: "agent_id" }));
  });

  check(["server", "mock"], "an invalid agent_number answers 400 invalid request, on get, pause and unpause", [["getAgentByNumber", 400], ["pauseAgentByNumber", 400], ["unpauseAgentByNumber", 400]], async () => {
    const client = target.client();
    for (const number of ["12a", "1".repeat(41), " "]) {
      const body = expectError(await client.getAgentByNumber(number), "getAgentByNumber", 400, "invalid request");
      expect(body.details).toContainEqual(expect.objectContaining({ location: "path", path: "agent_number" }));
      expectError(await client.pauseAgentByNumber(number), "pauseAgentByNumber", 400, "invalid request");
      expectError(await client.unpauseAgentByNumber(number), "unpauseAgentByNumber", 400, "invalid request");
    }
  });

  check(["server", "mock"], "an unpause body other than {} answers 400 invalid request", [["unpauseAgentByNumber", 400]], async () => {
    const client = target.client();
    for (const body of ['{"reason":"lunch"}', '{"paused":false}', "[]", '""', "0"]) {
      expectError(await unpauseRaw(client, bystander.number, body), "unpauseAgentByNumber", 400, "invalid request");
    }
  });

  check(["server"], "(state) a refused unpause body names the body location, and the agent stays paused", [], async () => {
    const client = target.client();
    const before = expectOk(await client.getAgentByNumber(onBreak.number), "getAgentByNumber");
    expect(before.paused).toBe(true);
    const body = expectError(await unpauseRaw(client, onBreak.number, '{"reason":"lunch"}'), "unpauseAgentByNumber", 400, "invalid request");
    expect(body.details?.[0]?.location).toBe("body");
    expect(expectOk(await client.getAgentByNumber(onBreak.number), "getAgentByNumber")).toEqual(before);
  });

  check(["server", "mock"], "a pause body that breaks PauseRequest answers 400 invalid request", [["pauseAgentByNumber", 400]], async () => {
    const client = target.client();
    expectError(await client.pauseAgentByNumber(bystander.number, ""), "pauseAgentByNumber", 400, "invalid request");
    expectError(await client.pauseAgentByNumber(bystander.number, "x".repeat(81)), "pauseAgentByNumber", 400, "invalid request");
    expectError(await pauseRaw(client, bystander.number, '{"reason":42}'), "pauseAgentByNumber", 400, "invalid request");
    expectError(await pauseRaw(client, bystander.number, '{"reason":"ok","until":"tomorrow"}'), "pauseAgentByNumber", 400, "invalid request");
  });

  check(["server"], "(state) a 400 for the body names the body location, and the agent is unchanged", [], async () => {
    const client = target.client();
    const before = expectOk(await client.getAgentByNumber(offline.number), "getAgentByNumber");
    const body = expectError(await pauseRaw(client, offline.number, '{"reason":"ok","until":"tomorrow"}'), "pauseAgentByNumber", 400, "invalid request");
    expect(body.details?.[0]?.location).toBe("body");
    expect(expectOk(await client.getAgentByNumber(offline.number), "getAgentByNumber")).toEqual(before);
  });

  // Prism (mock and proxy) parses the body itself and answers malformed JSON
  // in its own shape, a documented deviation of Prism (see test/mock.test.ts).
  check(["server"], "malformed JSON answers 400 invalid request", [["pauseAgentByNumber", 400]], async () => {
    const client = target.client();
    expectError(await pauseRaw(client, bystander.number, '{"reason": "lunch'), "pauseAgentByNumber", 400, "invalid request");
    expectError(await pauseRaw(client, bystander.number, "null"), "pauseAgentByNumber", 400, "invalid request");
    expectError(await unpauseRaw(client, bystander.number, "{"), "unpauseAgentByNumber", 400, "invalid request");
    expectError(await unpauseRaw(client, bystander.number, "null"), "unpauseAgentByNumber", 400, "invalid request");
  });

  check(["server"], "(state) a body that is JSON but not an object answers 400 'must be object', and the agent is unchanged", [], async () => {
    const client = target.client();
    const before = expectOk(await client.getAgentByNumber(bystander.number), "getAgentByNumber");
    for (const text of ["null", '"lunch"', "0", "true", "[]", '["lunch"]']) {
      const body = expectError(await pauseRaw(client, bystander.number, text), "pauseAgentByNumber", 400, "invalid request");
      expect(body.details, text).toEqual([{ location: "body", path: "", message: "must be object" }]);
    }
    const malformed = expectError(await pauseRaw(client, bystander.number, '{"reason": "lunch'), "pauseAgentByNumber", 400, "invalid request");
    expect(malformed.details).toEqual([{ location: "body", path: "", message: "is not valid JSON" }]);
    expect(expectOk(await client.getAgentByNumber(bystander.number), "getAgentByNumber")).toEqual(before);
  });

  // The contract's BadRequest includes unknown query parameters; Prism passes
  // them through (so on the proxy this is the 400 that reaches the server),
  // while the mock ignores them and answers 200.
  check(STATEFUL, "an unknown query parameter answers 400 invalid request on every operation", [["listAgents", 400], ["getAgentById", 400], ["getAgentByNumber", 400], ["pauseAgentByNumber", 400], ["unpauseAgentByNumber", 400]], async () => {
    const { raw } = target.client();
    const query = { query: { limit: 10 } } as never;
    const answers: [OperationId, AgentdResult<unknown>][] = [
      ["listAgents", toResult(await raw.GET("/agents", { params: query }))],
      ["getAgentById", toResult(await raw.GET("/agents/by-id/{agent_id}", { params: { path: { agent_id: pausable.id }, ...(query as object) } as never }))],
      ["getAgentByNumber", toResult(await raw.GET("/agents/by-number/{agent_number}", { params: { path: { agent_number: pausable.number }, ...(query as object) } as never }))],
      ["pauseAgentByNumber", toResult(await raw.POST("/agents/by-number/{agent_number}/pause", { params: { path: { agent_number: pausable.number }, ...(query as object) } as never }))],
      ["unpauseAgentByNumber", toResult(await raw.POST("/agents/by-number/{agent_number}/unpause", { params: { path: { agent_number: pausable.number }, ...(query as object) } as never }))],
    ];
    for (const [operationId, result] of answers) {
      const body = expectError(result, operationId, 400, "invalid request");
      expect(body.details).toContainEqual(expect.objectContaining({ location: "query", path: "limit" }));
    }
  });

  // --- 401 -----------------------------------------------------------------

  // On the proxy, Prism's own security check answers first, in its own
  // problem+json shape (documented in test/helpers/prism.ts).
  check(["server", "mock"], "no token answers 401 invalid token or unauthorized on every operation", [["listAgents", 401], ["getAgentById", 401], ["getAgentByNumber", 401], ["pauseAgentByNumber", 401], ["unpauseAgentByNumber", 401]], async () => {
    for (const [operationId, send] of everyOperation(target.client({ noToken: true }))) {
      expectError(await send(), operationId, 401, "invalid token or unauthorized");
    }
  });

  check(STATEFUL, "(state) an unknown token answers 401 invalid token or unauthorized on every operation", [["listAgents", 401], ["getAgentById", 401], ["getAgentByNumber", 401], ["pauseAgentByNumber", 401], ["unpauseAgentByNumber", 401]], async () => {
    const client = target.client({ token: "no-such-token-0123456789" });
    for (const [operationId, send] of everyOperation(client)) {
      expectError(await send(), operationId, 401, "invalid token or unauthorized");
    }
    // Refused, so nothing changed.
    expect(expectOk(await target.client().getAgentByNumber(pausable.number), "getAgentByNumber").paused_reason).not.toBe("contract suite");
  });

  // --- 403 -----------------------------------------------------------------

  check(STATEFUL, "(state) a token without the operation's ACL answers 403 insufficient permissions on every operation", [["listAgents", 403], ["getAgentById", 403], ["getAgentByNumber", 403], ["pauseAgentByNumber", 403], ["unpauseAgentByNumber", 403]], async () => {
    // May read one agent by number, nothing else.
    const client = target.client({ token: await target.createToken([`agentd.agents.by-number.${pausable.number}.read`]) });
    expectOk(await client.getAgentByNumber(pausable.number), "getAgentByNumber");
    expectError(await client.getAgentByNumber(away.number), "getAgentByNumber", 403, "insufficient permissions");
    expectError(await client.listAgents(), "listAgents", 403, "insufficient permissions");
    expectError(await client.getAgentById(pausable.id), "getAgentById", 403, "insufficient permissions");
    expectError(await client.pauseAgentByNumber(pausable.number), "pauseAgentByNumber", 403, "insufficient permissions");
    expectError(await client.unpauseAgentByNumber(pausable.number), "unpauseAgentByNumber", 403, "insufficient permissions");

    const reader = target.client({ token: await target.createToken(["agentd.agents.#"]) });
    expectOk(await reader.listAgents(), "listAgents");
    const pauser = target.client({ token: await target.createToken(["agentd.agents.by-number.*.pause.create"]) });
    expectResult(await pauser.pauseAgentByNumber(bystander.number, "allowed"), "pauseAgentByNumber", 204);
    expectError(await pauser.listAgents(), "listAgents", 403, "insufficient permissions");
    // Pausing and unpausing are separate rights.
    expectError(await pauser.unpauseAgentByNumber(bystander.number), "unpauseAgentByNumber", 403, "insufficient permissions");
    const unpauser = target.client({ token: await target.createToken([`agentd.agents.by-number.${bystander.number}.unpause.create`]) });
    expectResult(await unpauser.unpauseAgentByNumber(bystander.number), "unpauseAgentByNumber", 204);
    expectError(await unpauser.pauseAgentByNumber(bystander.number), "pauseAgentByNumber", 403, "insufficient permissions");
    expectError(await unpauser.unpauseAgentByNumber(pausable.number), "unpauseAgentByNumber", 403, "insufficient permissions");
  });

  // --- 404, 409, 413, 415 ---------------------------------------------------

  check(STATEFUL, "(state) an unknown agent answers 404 no such agent", [["getAgentById", 404], ["getAgentByNumber", 404], ["pauseAgentByNumber", 404], ["unpauseAgentByNumber", 404]], async () => {
    const client = target.client();
    expectError(await client.getAgentById(2147483647), "getAgentById", 404, "no such agent");
    expectError(await client.getAgentByNumber("999999"), "getAgentByNumber", 404, "no such agent");
    expectError(await client.pauseAgentByNumber("999999", "x"), "pauseAgentByNumber", 404, "no such agent");
    expectError(await client.unpauseAgentByNumber("999999"), "unpauseAgentByNumber", 404, "no such agent");
  });

  check(STATEFUL, "(state) pausing a logged-out agent answers 409 not logged in and changes nothing", [["pauseAgentByNumber", 409]], async () => {
    const client = target.client();
    const before = expectOk(await client.getAgentByNumber(away.number), "getAgentByNumber");
    expect(before.logged).toBe(false);
    expectError(await client.pauseAgentByNumber(away.number, "lunch"), "pauseAgentByNumber", 409, "not logged in");
    expectError(await client.pauseAgentByNumber(away.number), "pauseAgentByNumber", 409, "not logged in");
    expect(expectOk(await client.getAgentByNumber(away.number), "getAgentByNumber")).toEqual(before);
  });

  check(STATEFUL, "(state) unpausing a logged-out agent answers 409 not logged in and changes nothing", [["unpauseAgentByNumber", 409]], async () => {
    const client = target.client();
    const before = expectOk(await client.getAgentByNumber(away.number), "getAgentByNumber");
    expect(before.logged).toBe(false);
    expectError(await client.unpauseAgentByNumber(away.number), "unpauseAgentByNumber", 409, "not logged in");
    expectError(await unpauseRaw(client, away.number, "{}"), "unpauseAgentByNumber", 409, "not logged in");
    expect(expectOk(await client.getAgentByNumber(away.number), "getAgentByNumber")).toEqual(before);
  });

  check(["server"], "(state) a body over the limit answers 413 payload too large and changes nothing", [["pauseAgentByNumber", 413]], async () => {
    const client = target.client();
    const before = expectOk(await client.getAgentByNumber(offline.number), "getAgentByNumber");
    expectError(await client.pauseAgentByNumber(bystander.number, "x".repeat(20_000)), "pauseAgentByNumber", 413, "payload too large");
    // Valid JSON, valid PauseRequest, only too big: the limit is on bytes.
    expectError(await pauseRaw(client, offline.number, `{"reason":"x"${" ".repeat(20_000)}}`), "pauseAgentByNumber", 413, "payload too large");
    expect(expectOk(await client.getAgentByNumber(offline.number), "getAgentByNumber")).toEqual(before);
  });

  check(["server"], "(state) an unpause body over the limit answers 413 payload too large and the agent stays paused", [["unpauseAgentByNumber", 413]], async () => {
    const client = target.client();
    const before = expectOk(await client.getAgentByNumber(onBreak.number), "getAgentByNumber");
    // Valid JSON, the empty object, only too big.
    expectError(await unpauseRaw(client, onBreak.number, `{${" ".repeat(20_000)}}`), "unpauseAgentByNumber", 413, "payload too large");
    expect(expectOk(await client.getAgentByNumber(onBreak.number), "getAgentByNumber")).toEqual(before);
  });

  check(["server", "mock"], "a body that is not JSON answers 415 unsupported media type", [["pauseAgentByNumber", 415], ["unpauseAgentByNumber", 415]], async () => {
    const client = target.client();
    expectError(await unpauseRaw(client, bystander.number, "{}", "text/plain"), "unpauseAgentByNumber", 415, "unsupported media type");
    expectError(await pauseRaw(client, bystander.number, "lunch", "text/plain"), "pauseAgentByNumber", 415, "unsupported media type");
    expectError(await pauseRaw(client, bystander.number, "reason=lunch", "application/x-www-form-urlencoded"), "pauseAgentByNumber", 415, "unsupported media type");
  });

  // --- 429 and 503: targets with another server configuration ---------------

  if (STATEFUL.includes(name)) describe("with a rate limit of 1 request/s (burst 1)", () => {
    let limited: Target;
    // Started here, not in the background: the servers run in this process,
    // and a starting PGlite would stall the requests of the tests above.
    beforeAll(async () => {
      limited = await target.variant({ AGENTD_RATE_LIMIT: "1", AGENTD_RATE_BURST: "1" });
    });
    afterEach(() => {
      if (limited) expect(limited.takeViolations(), "contract violations reported by Prism").toEqual([]);
    });

    check(STATEFUL, "a token over its rate answers 429 too many requests with Retry-After, on every operation", [["listAgents", 429], ["getAgentById", 429], ["getAgentByNumber", 429], ["pauseAgentByNumber", 429], ["unpauseAgentByNumber", 429]], async () => {
      const client = limited.client();
      // Another token, known valid before the first one spends its budget.
      // Its first request counts against the client address's budget (the
      // token is not known valid until checked): let that refill.
      const other = limited.client({ token: await limited.createToken(["agentd.#"]) });
      expectOk(await other.listAgents(), "listAgents");
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      for (const [operationId, send] of everyOperation(client, bystander.id, bystander.number)) {
        // The burst allows one request per second; a few in a row must hit the limit.
        let result = await send();
        for (let i = 0; i < 5 && result.status !== 429; i++) result = await send();
        expectError(result, operationId, 429, "too many requests");
      }
      const { response } = await client.raw.GET("/agents");
      expect(response.status).toBe(429);
      expect(response.headers.get("retry-after")).toMatch(/^[0-9]+$/);
      // Per token: the other token still gets through.
      expectOk(await other.listAgents(), "listAgents");
    });
  });

  if (STATEFUL.includes(name)) describe("with the authentication service unreachable", () => {
    let cut: Target;
    beforeAll(async () => {
      const port = await freePort(); // released: nothing listens there
      cut = await target.variant({ AGENTD_AUTH_URL: `http://127.0.0.1:${port}`, AGENTD_AUTH_TIMEOUT: "1s" });
    });
    afterEach(() => {
      if (cut) expect(cut.takeViolations(), "contract violations reported by Prism").toEqual([]);
    });

    check(STATEFUL, "every operation answers 503 authentication server unreachable, never lets the request through", [["listAgents", 503], ["getAgentById", 503], ["getAgentByNumber", 503], ["pauseAgentByNumber", 503], ["unpauseAgentByNumber", 503]], async () => {
      const client = cut.client({ token: "some-token-0123456789" });
      for (const [operationId, send] of everyOperation(client)) {
        expectError(await send(), operationId, 503, "authentication server unreachable");
      }
    });
  });

  // --- the mock: state-dependent errors by Prefer: code=… ----------------------

  // Prism cannot know tokens, ACLs, agents, rate or size limits, or the
  // health of the services behind the server; it serves the contract's
  // example for the status the request prefers.
  const preferred: [OperationId, number, string][] = [
    ["listAgents", 400, "invalid request"], // the mock ignores unknown query parameters
    ...(Object.keys(operations) as OperationId[]).flatMap((op): [OperationId, number, string][] => [
      [op, 401, "invalid token or unauthorized"], // the mock accepts any token
      [op, 403, "insufficient permissions"],
      [op, 429, "too many requests"],
      [op, 500, "server error"],
      [op, 503, "authentication server unreachable"],
    ]),
    ["getAgentById", 404, "no such agent"],
    ["getAgentByNumber", 404, "no such agent"],
    ["pauseAgentByNumber", 404, "no such agent"],
    ["pauseAgentByNumber", 409, "not logged in"],
    ["pauseAgentByNumber", 413, "payload too large"],
    ["unpauseAgentByNumber", 404, "no such agent"],
    ["unpauseAgentByNumber", 409, "not logged in"],
    ["unpauseAgentByNumber", 413, "payload too large"],
  ];
  for (const [operationId, status, error] of preferred) {
    check(["mock"], `${operationId} serves the contract's ${status} with Prefer: code=${status}`, [[operationId, status]], async () => {
      const client = target.client({ prefer: `code=${status}` });
      const send = everyOperation(client).find(([op]) => op === operationId)![1];
      expectError(await send(), operationId, status, error);
    });
  }

  check(["mock"], "the mock accepts any token: it only checks that one is present", [], async () => {
    expectOk(await target.client({ token: "anything" }).listAgents(), "listAgents");
  });

  // The proxy's violation check must itself be able to fail: a Prism
  // validating against a copy of the contract that forbids a field the
  // server rightly sends must report every agent the server returns.
  check(["proxy"], "the violation check reports a response that breaks the contract given to Prism", [], async () => {
    const document = load(readFileSync(contractPath, "utf8")) as any;
    const status = document.components.schemas.AgentStatus;
    delete status.properties.state_interface;
    status.required = status.required.filter((f: string) => f !== "state_interface");
    const dir = mkdtempSync(path.join(tmpdir(), "agentd-contract-suite-"));
    try {
      const spec = path.join(dir, "stricter.yaml");
      writeFileSync(spec, dump(document));
      const strict = await target.withContract(spec);
      expect(strict.takeViolations()).toEqual([]);
      const result = await strict.client().getAgentById(pausable.id);
      expect(result.status).toBe(500); // --errors: Prism's VIOLATIONS problem instead of the response
      const violations = strict.takeViolations();
      expect(violations.length).toBeGreaterThan(0);
      expect(violations.join("\n")).toMatch(/problem\+json/);
      expect(violations.join("\n")).toMatch(/additionalProperties.*state_interface/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// ---------------------------------------------------------------------------
// Coverage: every documented status, on every target

describe("coverage of the contract", () => {
  const documented = contract.operations().flatMap((op) =>
    Object.keys(op.operation.responses ?? {}).map((status) => [op.operationId as OperationId, Number(status)] as const),
  );

  it("the suite knows every operation of the contract", () => {
    expect(contract.operations().map((op) => op.operationId).sort()).toEqual(
      ["getAgentById", "getAgentByNumber", "listAgents", "pauseAgentByNumber", "unpauseAgentByNumber"],
    );
  });

  it.each(ALL.map((name) => ({ name })))(
    "on the $name, every documented status is exercised or listed as unreachable with the reason",
    ({ name }) => {
      const missing: string[] = [];
      const both: string[] = [];
      for (const [operationId, status] of documented) {
        const reason = UNREACHABLE[name][operationId]?.[status];
        const isCovered = covered[name].has(key(operationId, status));
        if (!isCovered && reason === undefined) missing.push(key(operationId, status));
        if (isCovered && reason !== undefined) both.push(key(operationId, status));
      }
      expect(missing, "documented but never exercised").toEqual([]);
      expect(both, "exercised yet listed as unreachable").toEqual([]);
      // Nothing covered that the contract does not document.
      const known = new Set(documented.map(([op, status]) => key(op, status)));
      expect([...covered[name]].filter((k) => !known.has(k))).toEqual([]);
    },
  );
});
