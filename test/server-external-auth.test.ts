// The server with AGENTD_AUTH_URL: tokens are checked by a real (small)
// wazo-auth compatible HTTP service, with the ACL the contract names.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { suiteAgents } from "./helpers/agents.js";
import { AuthService } from "../devkit/auth-service.js";
import { loadContract, expectValid } from "./helpers/contract.js";
import { useTestServer } from "./helpers/server.js";

const errorSchema = loadContract().schemaValidator("Error");

describe("the server with an external auth service", () => {
  let auth: AuthService;

  beforeAll(async () => {
    auth = new AuthService(
      new Map([
        ["supervisor", ["agentd.#"]],
        ["reader", ["agentd.agents.read", "agentd.agents.by-number.*.read"]],
      ]),
    );
    await auth.start();
  });
  afterAll(async () => {
    await auth?.stop();
  });
  // Registered after the auth service's hooks: it starts once the service listens, and stops before it.
  const server = useTestServer({
    env: () => ({ AGENTD_AUTH_URL: auth.url, AGENTD_ADMIN_TOKEN: "", AGENTD_AUTH_CACHE_TTL: "10s" }),
    agents: suiteAgents(),
  });

  it("asks the service with the operation's ACL, path values filled in", async () => {
    auth.requests.length = 0;
    expect((await server.call("GET", "/agents/by-number/1003", { token: "supervisor" })).status).toBe(200);
    expect(auth.requests).toEqual([{ method: "HEAD", token: "supervisor", scope: "agentd.agents.by-number.1003.read" }]);
    expect((await server.call("POST", "/agents/by-number/1001/pause", { token: "supervisor", body: { reason: "ext" } })).status).toBe(204);
    expect(auth.requests.at(-1)).toEqual({ method: "HEAD", token: "supervisor", scope: "agentd.agents.by-number.1001.pause.create" });
    expect((await server.call("POST", "/agents/by-number/1001/unpause", { token: "supervisor" })).status).toBe(204);
    expect(auth.requests.at(-1)).toEqual({ method: "HEAD", token: "supervisor", scope: "agentd.agents.by-number.1001.unpause.create" });
  });

  it("maps 404 to 401 and 403 to 403, with the contract's Error body", async () => {
    const unknown = await server.call("GET", "/agents", { token: "nobody" });
    expect(unknown.status).toBe(401);
    expect(expectValid(errorSchema, unknown.json).error).toBe("invalid token or unauthorized");

    const forbidden = await server.call("POST", "/agents/by-number/1001/pause", { token: "reader", body: {} });
    expect(forbidden.status).toBe(403);
    expect(expectValid(errorSchema, forbidden.json).error).toBe("insufficient permissions");
    expect((await server.call("GET", "/agents/by-number/1005", { token: "reader" })).status).toBe(200);
  });

  it("answers repeated requests from its cache, but never caches a refusal", async () => {
    await server.call("GET", "/agents/by-id/1", { token: "supervisor" });
    auth.requests.length = 0;
    for (let i = 0; i < 5; i++) {
      expect((await server.call("GET", "/agents/by-id/1", { token: "supervisor" })).status).toBe(200);
    }
    expect(auth.requests).toHaveLength(0);

    for (let i = 0; i < 3; i++) {
      expect((await server.call("GET", "/agents/by-id/1", { token: "reader" })).status).toBe(403);
    }
    expect(auth.requests).toHaveLength(3);
  });

  it("does not accept embedded tokens while an auth service is configured", async () => {
    const answer = await server.call("GET", "/agents", { token: "test-admin-token-0123456789abcdef" });
    expect(answer.status).toBe(401);
  });
});
