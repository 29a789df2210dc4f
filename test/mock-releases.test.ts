// The mock of a published release, as a front end developing against an old
// deployment starts it: `npm run mock -- --release <release>` (Prism serving
// releases/openapi-<release>.yaml), called over HTTP.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectValid, loadContract } from "./helpers/contract.js";
import { frozenFile } from "../scripts/lib/project.js";
import { startPrism } from "./helpers/prism.js";
import type { PrismHandle } from "./helpers/prism.js";

const mocks = new Map<string, PrismHandle>();

beforeAll(async () => {
  // Other arguments go through to Prism: 15.19 runs in dynamic mode.
  const started = await Promise.all([
    startPrism({ mode: "mock", release: "15.14" }),
    startPrism({ mode: "mock", release: "15.18" }),
    startPrism({ mode: "mock", release: "15.19", dynamic: true }),
  ]);
  for (const [i, release] of ["15.14", "15.18", "15.19"].entries()) mocks.set(release, started[i]!);
});

afterAll(async () => {
  await Promise.all([...mocks.values()].map((mock) => mock.stop()));
});

function mock(release: string): PrismHandle {
  const found = mocks.get(release);
  if (found === undefined) throw new Error(`no mock of ${release}`);
  return found;
}

describe("npm run mock -- --release", () => {
  it("serves the frozen release, with the caller's --host and --port instead of the defaults", () => {
    for (const [release, handle] of mocks) {
      const command = handle.output().split("\n").find((line) => line.startsWith("prism mock "));
      expect(command, handle.output()).toBeDefined();
      const args = (command ?? "").split(" ");
      expect(args[2], release).toBe(`releases/openapi-${release}.yaml`);
      // Prism on a loopback port of its own, behind the front door on the caller's.
      expect(args.filter((arg) => arg === "--port"), release).toHaveLength(1);
      expect(args.filter((arg) => arg === "--host"), release).toHaveLength(1);
      expect(args[args.indexOf("--host") + 1]).toBe("127.0.0.1");
      expect(args[args.indexOf("--port") + 1]).not.toBe(String(handle.port));
      expect(handle.output()).toContain(`agentd stateless mock on http://127.0.0.1:${handle.port}:`);
      // A release before tokens (15.19) is tried without one.
      const token = ["15.14", "15.15", "15.18"].includes(release) ? "" : "-H 'X-Auth-Token: any' ";
      expect(handle.output()).toContain(`  try:     curl ${token}http://127.0.0.1:${handle.port}/agents\n`);
    }
    expect(mock("15.19").output()).toMatch(/^prism mock .* --dynamic\b/m);
  });

  it("15.18 answers a GET without a token (no authentication before 15.19)", async () => {
    const response = await fetch(`${mock("15.18").url}/agents/by-number/1001`);
    expect(response.status).toBe(200);
    const body = expectValid(loadContract(frozenFile("15.18")).responseValidator("getAgentByNumber", 200), await response.json());
    expect(body).toHaveProperty("state_interface");
  });

  // As docs/front-end.md says: a release answers as it did.
  it("before 17.05 a pause takes no body: 15.19 refuses even {} with 400, and has no paused example", async () => {
    const pause = (body: string) =>
      fetch(`${mock("15.19").url}/agents/by-number/1001/pause`, { method: "POST", headers: { "X-Auth-Token": "any", "Content-Type": "application/json" }, body });
    expect((await pause("{}")).status).toBe(400);
    expect((await pause('{"reason":"lunch"}')).status).toBe(400);
    const paused = await fetch(`${mock("15.14").url}/agents/by-number/1003`, { headers: { Prefer: "example=paused" } });
    expect(paused.status).toBe(400);
    expect(await paused.json()).toEqual({
      error: "invalid request",
      details: [{ location: "header", path: "Prefer", message: 'the answer has no example named "paused" in the contract' }],
    });
  });

  it("15.19 answers 401 without a token", async () => {
    const response = await fetch(`${mock("15.19").url}/agents`);
    expect(response.status).toBe(401);
    const authorised = await fetch(`${mock("15.19").url}/agents`, { headers: { "X-Auth-Token": "any" } });
    expect(authorised.status).toBe(200);
  });

  // Amended: unpause existed upstream in every release, so every frozen release has it.
  it("15.14 unpauses without a token or a body, and 15.19 only with a token", async () => {
    const path = "/agents/by-number/1003/unpause";
    const old = await fetch(`${mock("15.14").url}${path}`, { method: "POST" });
    expect(old.status, await old.text()).toBe(204);
    const refused = await fetch(`${mock("15.19").url}${path}`, { method: "POST" });
    expect(refused.status).toBe(401);
    const authorised = await fetch(`${mock("15.19").url}${path}`, { method: "POST", headers: { "X-Auth-Token": "any" } });
    expect(authorised.status).toBe(204);
  });

  // docs/front-end.md: the releases list no 415, but the front door answers it as today's server does.
  it("answers a body not said to be JSON with 415 in a release that lists no 415, as today's server does", async () => {
    for (const type of ["text/plain", "application/xml"]) {
      const answer = await fetch(`${mock("15.14").url}/agents/by-number/1003/unpause`, { method: "POST", headers: { "Content-Type": type }, body: "x" });
      expect([answer.status, await answer.json()], type).toEqual([415, { error: "unsupported media type" }]);
    }
  });

  it("15.14's agents have no state_interface", async () => {
    const response = await fetch(`${mock("15.14").url}/agents`);
    expect(response.status).toBe(200);
    const agents = expectValid(loadContract(frozenFile("15.14")).responseValidator("listAgents", 200), await response.json()) as Record<string, unknown>[];
    expect(agents.length).toBeGreaterThan(0);
    for (const agent of agents) {
      expect(Object.keys(agent).sort()).toEqual(["context", "extension", "id", "logged", "number", "origin_uuid"]);
    }
  });
});
