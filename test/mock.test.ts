// The mock server a front end develops against: the real Prism CLI serving
// openapi.yaml, called over HTTP exactly as `npm run mock` would be.
import http from "node:http";
import { request } from "undici";
import { BASE_PATH } from "../server/contract.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contractFrom, expectValid, loadContract } from "./helpers/contract.js";
import { groupAlive, runMockScript, startPrism } from "./helpers/prism.js";
import type { PrismHandle } from "./helpers/prism.js";

const contract = loadContract();
// Prism's generator (json-schema-faker 0.5) ignores if/then, so a dynamic
// agent may break AgentStatus's state rules (a logged-out agent on an
// extension): dynamic bodies are checked against everything else.
const withoutStateRules = (() => {
  const document = structuredClone(contract.document);
  delete document.components.schemas.AgentStatus.allOf;
  return contractFrom(document);
})();
const TOKEN = { "X-Auth-Token": "any-token" };
const JSON_BODY = { "Content-Type": "application/json" };

let prism: PrismHandle;

beforeAll(async () => {
  prism = await startPrism({ mode: "mock" });
});

afterAll(async () => {
  await prism?.stop();
});

/**
 * The status of a POST whose body is chunked and ends with no chunk, as a
 * client streaming an empty body sends it (Node's http, with no Content-Type).
 */
function postEmptyChunked(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const url = new URL(`${prism.url}${path}`);
    const sent = http.request(url, { method: "POST", headers: { ...TOKEN, "Transfer-Encoding": "chunked" } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    sent.on("error", reject);
    sent.end();
  });
}

async function call(path: string, init: RequestInit = {}): Promise<{ status: number; type: string; text: string; json: () => any }> {
  const response = await fetch(`${prism.url}${path}`, init);
  const text = await response.text();
  return {
    status: response.status,
    type: response.headers.get("content-type") ?? "",
    text,
    json: () => {
      try {
        return JSON.parse(text);
      } catch {
        throw new Error(`not JSON (${response.status}): ${text}\n--- prism log ---\n${prism.output()}`);
      }
    },
  };
}

// Every operation once, with a valid path, for the token and 401 checks.
const everyOperation = [
  { operationId: "listAgents", path: "/agents", init: {} },
  { operationId: "getAgentById", path: "/agents/by-id/1", init: {} },
  { operationId: "getAgentByNumber", path: "/agents/by-number/1001", init: {} },
  {
    operationId: "pauseAgentByNumber",
    path: "/agents/by-number/1001/pause",
    init: { method: "POST", headers: JSON_BODY, body: JSON.stringify({ reason: "lunch break" }) },
  },
  { operationId: "unpauseAgentByNumber", path: "/agents/by-number/1003/unpause", init: { method: "POST" } },
] as const;

describe("Prism mock of the contract", () => {
  it("serves the paths from its root, not under the servers' base path", async () => {
    expect((await call("/agents", { headers: TOKEN })).status).toBe(200);
    expect((await call(`${BASE_PATH}/agents`, { headers: TOKEN })).status).toBe(404);
  });

  it("lists agents as an array of contract AgentStatus objects", async () => {
    const res = await call("/agents", { headers: TOKEN });
    expect(res.status).toBe(200);
    expect(res.type).toMatch(/^application\/json/);
    const body = expectValid(contract.responseValidator("listAgents", 200), res.json());
    expect(body.length).toBeGreaterThan(0);
  });

  it("gets an agent by id and by number", async () => {
    for (const [operationId, path] of [
      ["getAgentById", "/agents/by-id/1"],
      ["getAgentByNumber", "/agents/by-number/1001"],
    ] as const) {
      const res = await call(path, { headers: TOKEN });
      expect(res.status, path).toBe(200);
      expectValid(contract.responseValidator(operationId, 200), res.json(), path);
    }
  });

  it("pauses an agent with 204 and no body, with a reason, an empty object or no body at all", async () => {
    const path = "/agents/by-number/1001/pause";
    const bodies: RequestInit[] = [
      { method: "POST", headers: { ...TOKEN, ...JSON_BODY }, body: JSON.stringify({ reason: "lunch break" }) },
      { method: "POST", headers: { ...TOKEN, ...JSON_BODY }, body: "{}" },
      { method: "POST", headers: TOKEN },
      { method: "POST", headers: TOKEN, body: "" },
    ];
    // Chunked with no chunk is no body either, as the server takes it.
    expect(await postEmptyChunked(path), "(chunked, no chunk)").toBe(204);
    for (const init of bodies) {
      const res = await call(path, init);
      expect(res.status, typeof init.body === "string" ? init.body : "(no body)").toBe(204);
      expect(res.text).toBe("");
    }
  });

  it("unpauses an agent with 204 and no body, with no body at all (with or without a Content-Type) or an empty object", async () => {
    const path = "/agents/by-number/1003/unpause";
    const bodies: RequestInit[] = [
      { method: "POST", headers: TOKEN },
      { method: "POST", headers: { ...TOKEN, ...JSON_BODY } },
      { method: "POST", headers: { ...TOKEN, ...JSON_BODY }, body: "{}" },
      // fetch sends text/plain with Content-Length: 0 for an empty string, as the server takes it.
      { method: "POST", headers: TOKEN, body: "" },
    ];
    // Chunked with no chunk is no body either, as the server takes it.
    expect(await postEmptyChunked(path), "(chunked, no chunk)").toBe(204);
    for (const init of bodies) {
      const res = await call(path, init);
      expect(res.status, typeof init.body === "string" ? init.body : "(no body)").toBe(204);
      expect(res.text).toBe("");
    }
  });

  it.each(everyOperation)("answers $operationId without a token with 401 and the contract's error", async ({ operationId, path, init }) => {
    const res = await call(path, init);
    expect(res.status).toBe(401);
    expect(res.type).toMatch(/^application\/json/);
    const body = expectValid(contract.responseValidator(operationId, 401), res.json());
    expect(body).toEqual({ error: "invalid token or unauthorized" });
  });

  it("serves the contract's 401 example when asked with Prefer: code=401", async () => {
    const res = await call("/agents", { headers: { ...TOKEN, Prefer: "code=401" } });
    expect(res.status).toBe(401);
    expect(res.json()).toEqual(contract.resolve(contract.document.components.examples.InvalidToken).value);
  });

  it.each([
    { what: "agent_id that is not a number", path: "/agents/by-id/abc", init: {} },
    { what: "agent_id below 1", path: "/agents/by-id/0", init: {} },
    { what: "agent_number with a letter", path: "/agents/by-number/12a", init: {} },
    {
      what: "empty pause reason",
      path: "/agents/by-number/1001/pause",
      init: { method: "POST", headers: JSON_BODY, body: JSON.stringify({ reason: "" }) },
    },
    {
      what: "pause reason over 80 characters",
      path: "/agents/by-number/1001/pause",
      init: { method: "POST", headers: JSON_BODY, body: JSON.stringify({ reason: "x".repeat(81) }) },
    },
    {
      what: "unknown field in the pause body",
      path: "/agents/by-number/1001/pause",
      init: { method: "POST", headers: JSON_BODY, body: JSON.stringify({ reason: "ok", extra: 1 }) },
    },
    {
      what: "an unpause body with a reason",
      path: "/agents/by-number/1003/unpause",
      init: { method: "POST", headers: JSON_BODY, body: JSON.stringify({ reason: "back" }) },
    },
    {
      what: "an unpause body that is not an object",
      path: "/agents/by-number/1003/unpause",
      init: { method: "POST", headers: JSON_BODY, body: "[]" },
    },
    { what: "agent_number with a letter on unpause", path: "/agents/by-number/12a/unpause", init: { method: "POST" } },
  ])("rejects $what with 400 and the contract's error", async ({ path, init }) => {
    const res = await call(path, { ...init, headers: { ...TOKEN, ...(init as RequestInit).headers } });
    expect(res.status).toBe(400);
    const body = expectValid(contract.schemaValidator("Error"), res.json());
    expect(body.error).toBe("invalid request");
  });

  it("rejects a pause body that is not JSON with 415 and the contract's error", async () => {
    const res = await call("/agents/by-number/1001/pause", {
      method: "POST",
      headers: { ...TOKEN, "Content-Type": "text/plain" },
      body: "lunch",
    });
    expect(res.status).toBe(415);
    expect(expectValid(contract.responseValidator("pauseAgentByNumber", 415), res.json())).toEqual({
      error: "unsupported media type",
    });
  });

  // The front door reads a JSON body with the server's own parser and limit.
  // Found by a front-end developer's walk: the front door's parser took a BOM, as the server's
  // does, but sent the bytes on as they came, and Prism answered in its HTTP library's own shape.
  it("takes a JSON body with a byte order mark, or in UTF-16, as the server does", async () => {
    const json = '{"reason":"lunch break"}';
    for (const [bytes, type] of [
      [Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]), "application/json"],
      [Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]), "application/json; charset=utf-8"],
      [Buffer.from(json, "utf16le"), "application/json; charset=utf-16le"],
    ] as const) {
      const res = await call("/agents/by-number/1001/pause", { method: "POST", headers: { ...TOKEN, "Content-Type": type }, body: bytes });
      expect([res.status, res.text], `${type} ${bytes.subarray(0, 3).toString("hex")}`).toEqual([204, ""]);
    }
  });

  it("answers malformed JSON, JSON that is not an object, bytes that are not UTF-8 and a body over the limit as the server does", async () => {
    const notUtf8 = Buffer.concat([Buffer.from('{"reason":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]);
    for (const [body, message] of [
      ["{not json", "is not valid JSON"],
      ["null", "must be object"],
      ["0", "must be object"],
      ["[]", "must be object"],
      ["[1]", "must be object"],
      [notUtf8, "must be UTF-8 (the body holds bytes that are not)"],
    ] as const) {
      const res = await call("/agents/by-number/1001/pause", { method: "POST", headers: { ...TOKEN, ...JSON_BODY }, body });
      expect(res.status, message).toBe(400);
      expect(expectValid(contract.responseValidator("pauseAgentByNumber", 400), res.json())).toEqual({ error: "invalid request", details: [{ location: "body", path: "", message }] });
    }
    const padded = `{"reason": "x"${" ".repeat(64 * 1024)}}`;
    const large = await call("/agents/by-number/1001/pause", { method: "POST", headers: { ...TOKEN, ...JSON_BODY }, body: padded });
    expect(large.status).toBe(413);
    expect(large.json()).toEqual({ error: "payload too large" });
  });

  // Each of these made Prism answer 500 or exit, and the mock with it.
  it("answers what Prism fails on (bad percent-encoding, a Content-Type that does not parse, a body thousands deep) as the server would, and stays up", async () => {
    for (const path of ["/agents/by-id/%", "/agents/by-id/%C0%80", "/agents?x=%"]) {
      const res = await call(path, { headers: TOKEN });
      expect(res.status, path).toBe(400);
      expect(res.json()).toMatchObject({ error: "invalid request" });
    }
    const garbled = await call("/agents/by-number/1001/pause", { method: "POST", headers: { ...TOKEN, "Content-Type": ";;;/", Origin: "http://localhost:5173" }, body: "{}" });
    expect(garbled.status).toBe(415);
    expect(garbled.json()).toEqual({ error: "unsupported media type" });
    // Prism's CORS on the front door's own answers too, for a browser page.
    const cors = await fetch(`${prism.url}/agents/by-id/%`, { headers: { ...TOKEN, Origin: "http://localhost:5173" } });
    expect([cors.status, cors.headers.get("access-control-allow-origin"), cors.headers.get("access-control-allow-credentials")]).toEqual([400, "http://localhost:5173", "true"]);
    // An expectation other than 100-continue is ignored, as the server ignores it (Node alone answers 417).
    const expecting = await new Promise<number>((resolve, reject) => {
      const sent = http.request(`${prism.url}/agents`, { headers: { ...TOKEN, Expect: "202-accept" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      sent.on("error", reject);
      sent.end();
    });
    expect(expecting).toBe(200);
    // Parameters that do not parse are left out for Prism, as the server ignores them; the charset is kept, as the server keeps it.
    const pauseAs = (type: string) => call("/agents/by-number/1001/pause", { method: "POST", headers: { ...TOKEN, "Content-Type": type }, body: '{"reason":"x"}' });
    expect((await pauseAs("application/json; charset")).status).toBe(204);
    expect((await pauseAs("application/json; charset=utf-8; x")).status).toBe(204);
    const latin1 = await pauseAs("application/json; charset=latin1; x");
    expect([latin1.status, latin1.json()]).toEqual([415, { error: "unsupported media type" }]);
    const deep = await call("/agents/by-number/1001/pause", { method: "POST", headers: { ...TOKEN, ...JSON_BODY }, body: `${"[".repeat(5000)}${"]".repeat(5000)}` });
    expect(deep.status).toBe(400);
    expect(deep.json()).toMatchObject({ error: "invalid request" });
    expect((await call("/agents", { headers: TOKEN })).status).toBe(200);
  });

  // The server answers the same (test/server-api.test.ts); fetch cannot send a GET with a body.
  it("answers a GET that carries a body with the contract's 400, whatever the body", async () => {
    for (const [type, body] of [["application/json", "{}"], ["application/json", '{"paused":true}'], ["text/plain", "x"]] as const) {
      const res = await request(`${prism.url}/agents/by-number/1001`, { method: "GET", headers: { ...TOKEN, "content-type": type }, body });
      expect(res.statusCode, `${type} ${body}`).toBe(400);
      expectValid(contract.responseValidator("getAgentByNumber", 400), await res.body.json());
    }
  });

  it("selects a named example with Prefer: example=…", async () => {
    const examples = contract.document.components.examples;
    const cases = [
      ["paused", examples.AgentPaused],
      ["loggedOut", examples.AgentLoggedOut],
      ["loggedIn", examples.AgentLoggedIn],
    ] as const;
    for (const [name, example] of cases) {
      const res = await call("/agents/by-number/1003", { headers: { ...TOKEN, Prefer: `example=${name}` } });
      expect(res.status, name).toBe(200);
      expect(res.json(), name).toEqual(example.value);
    }
    const paused = (await call("/agents/by-id/3", { headers: { ...TOKEN, Prefer: "example=paused" } })).json();
    expect(paused).toMatchObject({ paused: true, paused_reason: "lunch break" });
  });

  it("gives a status's first example, and another with example= beside code= (docs/front-end.md)", async () => {
    const first = await call("/agents", { headers: { ...TOKEN, Prefer: "code=503" } });
    expect(first.json()).toEqual({ error: "authentication server unreachable" });
    const other = await call("/agents", { headers: { ...TOKEN, Prefer: "code=503, example=databaseUnavailable" } });
    expect(other.status).toBe(503);
    expect(other.json()).toEqual({ error: "database unavailable" });
  });

  it("answers a Prefer that asks for what the contract lacks (an example name, a status the operation never answers) with 400 naming the header, not a 404 that reads as a wrong URL", async () => {
    const example = await call("/agents/by-number/1003", { headers: { ...TOKEN, Prefer: "example=nope" } });
    expect(example.status).toBe(400);
    expect(expectValid(contract.schemaValidator("Error"), example.json())).toEqual({
      error: "invalid request",
      details: [{ location: "header", path: "Prefer", message: 'the answer has no example named "nope" in the contract' }],
    });
    const status = await call("/agents", { headers: { ...TOKEN, Prefer: "code=409" } });
    expect(status.status).toBe(400);
    expect(status.json()).toEqual({ error: "invalid request", details: [{ location: "header", path: "Prefer", message: "the operation has no 409 answer in the contract" }] });
    // Found by a front-end developer's walk: an unknown example beside a status was Prism's
    // 500 (naming no example) and came out as the contract's 500, which reads as the mock broken.
    for (const [path, method, prefer] of [
      ["/agents", "GET", "code=503, example=nope"],
      ["/agents/by-id/1", "GET", "code=200, example=nope"],
      ["/agents/by-number/1001/pause", "POST", "code=409, example=nope"],
    ] as const) {
      const res = await call(path, { method, headers: { ...TOKEN, Prefer: prefer } });
      const code = /code=(\d+)/.exec(prefer)![1];
      expect([res.status, res.json()], `${method} ${path} ${prefer}`).toEqual([
        400,
        { error: "invalid request", details: [{ location: "header", path: "Prefer", message: `the ${code} answer has no example named "nope" in the contract` }] },
      ]);
    }
    // Asked in the query, the details name the query parameter, not the header.
    const queried = await call("/agents?__code=503&__example=nope", { headers: TOKEN });
    expect(queried.json().details).toEqual([{ location: "query", path: "__example", message: 'the 503 answer has no example named "nope" in the contract' }]);
    const queriedStatus = await call("/agents?__code=409", { headers: TOKEN });
    expect(queriedStatus.json().details).toEqual([{ location: "query", path: "__code", message: "the operation has no 409 answer in the contract" }]);
    // A path off the contract is still the contract's 404.
    const off = await call("/1.0/agents", { headers: TOKEN });
    expect([off.status, off.json()]).toEqual([404, { error: "not found" }]);
  });

  // Prism ignores an example name where the answer has no body: a pause
  // asked for its 409 example without code= looked done but was not.
  it("answers example= (or ?__example=) on an operation whose answer is a 204 with 400 naming the header (or parameter), as for a name the answer lacks; with its status, the example is served", async () => {
    for (const [path, prefer] of [
      ["/agents/by-number/1002/pause", "example=notLoggedIn"],
      ["/agents/by-number/1001/pause", "code=204, example=zzzz"],
      ["/agents/by-number/1002/unpause", "example=notLoggedIn"],
    ] as const) {
      const res = await call(path, { method: "POST", headers: { ...TOKEN, Prefer: prefer } });
      expect(res.status, `${path} ${prefer}`).toBe(400);
      const body = expectValid(contract.schemaValidator("Error"), res.json());
      expect(body.details).toHaveLength(1);
      expect(body.details[0]).toMatchObject({ location: "header", path: "Prefer" });
      expect(body.details[0].message).toMatch(/^the answer has no example named "\w+" in the contract: a 204 has no body/);
    }
    // Prism's query form, read only without a Prefer header, alike.
    const queried = await call("/agents/by-number/1002/pause?__example=notLoggedIn", { method: "POST", headers: TOKEN });
    expect(queried.status).toBe(400);
    expect(expectValid(contract.schemaValidator("Error"), queried.json()).details).toEqual([
      {
        location: "query",
        path: "__example",
        message: 'the answer has no example named "notLoggedIn" in the contract: a 204 has no body (name the status of the answer that has it: __code=<status>&__example=notLoggedIn)',
      },
    ]);
    const both = await call("/agents/by-number/1001/pause?__example=notLoggedIn", { method: "POST", headers: { ...TOKEN, Prefer: "delay=0" } });
    expect(both.status, "a Prefer of the mock's own (delay) is not one Prism sees").toBe(400);
    const chosen = await call("/agents/by-number/1002/pause", { method: "POST", headers: { ...TOKEN, Prefer: "code=409, example=notLoggedIn" } });
    expect([chosen.status, chosen.json()]).toEqual([409, { error: "not logged in" }]);
    expect((await call("/agents/by-number/1001/pause", { method: "POST", headers: TOKEN })).status).toBe(204);
  });

  // Where Prism's mock alone would answer otherwise than the server, the
  // front door takes the server's side (test/server-api.test.ts pins the
  // server's answers to the same requests).
  it("answers as the server does where Prism's mock alone would not: Accept ignored, a trailing slash taken, a body not said to be JSON refused with 415", async () => {
    for (const accept of ["text/html", "application/xml", "text/plain"]) {
      const res = await call("/agents/by-id/1", { headers: { ...TOKEN, Accept: accept } });
      expect([res.status, res.type], accept).toEqual([200, expect.stringMatching(/^application\/json/)]);
      expect(res.json().id).toBe(1);
    }
    for (const path of ["/agents/", "/agents/by-id/1/", "/agents/by-number/1001/"]) expect((await call(path, { headers: TOKEN })).status, path).toBe(200);
    expect((await call("/agents/by-number/1003/unpause/", { method: "POST", headers: TOKEN })).status).toBe(204);
    const twice = await call("/agents//", { headers: TOKEN });
    expect([twice.status, twice.json()]).toEqual([404, { error: "not found" }]);
    for (const type of ["application/vnd.api+json", "application/merge-patch+json", "text/plain", "application/xml"]) {
      const res = await call("/agents/by-number/1001/pause", { method: "POST", headers: { ...TOKEN, "Content-Type": type }, body: '{"reason":"x"}' });
      expect([res.status, res.json()], type).toEqual([415, { error: "unsupported media type" }]);
    }
  });

  // Also of a request Prism cannot take (bad percent-encoding), so the page reads the answer to it.
  it("answers a CORS preflight itself, allowing what was asked, and lets the browser cache it", async () => {
    for (const [path, method, asked] of [
      ["/agents/by-number/1001/pause", "POST", "content-type, prefer, x-auth-token"],
      ["/agents/by-id/%", "GET", "x-auth-token"],
    ] as const) {
      const res = await fetch(`${prism.url}${path}`, {
        method: "OPTIONS",
        headers: { Origin: "http://localhost:5173", "Access-Control-Request-Method": method, "Access-Control-Request-Headers": asked },
      });
      expect(res.status, path).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
      expect(res.headers.get("access-control-allow-headers")).toBe(asked);
      expect(res.headers.get("access-control-allow-methods")).toContain(method);
      expect(res.headers.get("access-control-max-age")).toBe("600");
    }
  });

  it("serves each error response of the contract with Prefer: code=…", async () => {
    const cases = [
      ["getAgentByNumber", "/agents/by-number/9999", {}, 404, "no such agent"],
      ["getAgentById", "/agents/by-id/9999", {}, 403, "insufficient permissions"],
      ["pauseAgentByNumber", "/agents/by-number/1002/pause", { method: "POST" }, 409, "not logged in"],
      ["unpauseAgentByNumber", "/agents/by-number/1002/unpause", { method: "POST" }, 409, "not logged in"],
      ["unpauseAgentByNumber", "/agents/by-number/9999/unpause", { method: "POST" }, 404, "no such agent"],
      ["listAgents", "/agents", {}, 429, "too many requests"],
      ["listAgents", "/agents", {}, 503, "authentication server unreachable"],
    ] as const;
    for (const [operationId, path, init, status, error] of cases) {
      const res = await call(path, { ...init, headers: { ...TOKEN, Prefer: `code=${status}` } });
      expect(res.status, `${operationId} ${status}`).toBe(status);
      const body = expectValid(contract.responseValidator(operationId, status), res.json());
      expect(body.error).toBe(error);
    }
  });

  it("generates bodies that still match the contract with Prefer: dynamic=true", async () => {
    for (let i = 0; i < 5; i++) {
      const one = await call("/agents/by-number/1001", { headers: { ...TOKEN, Prefer: "dynamic=true" } });
      expect(one.status).toBe(200);
      expectValid(withoutStateRules.responseValidator("getAgentByNumber", 200), one.json());
      const list = await call("/agents", { headers: { ...TOKEN, Prefer: "dynamic=true" } });
      expect(list.status).toBe(200);
      expectValid(withoutStateRules.responseValidator("listAgents", 200), list.json());
    }
  });

  // Where the stateless mock is looser than the server, as docs/front-end.md
  // lists: each case pinned, so that the list stays true (and a Prism
  // upgrade that changes one is noticed).
  it("is looser than the server exactly where docs/front-end.md says", async () => {
    const pause = "/agents/by-number/1001/pause";
    const post = (body: string | undefined, type?: string) =>
      call(pause, { method: "POST", headers: { ...TOKEN, ...(type ? { "Content-Type": type } : {}) }, ...(body === undefined ? {} : { body }) });
    // A lone surrogate in the reason (server: 400).
    expect((await post('{"reason":"\\ud800"}', "application/json")).status).toBe(204);
    // An array body, without a token (server: 401).
    const array = await call(pause, { method: "POST", headers: { "Content-Type": "application/json" }, body: "[]" });
    expect([array.status, array.json().details]).toEqual([400, [{ location: "body", path: "", message: "must be object" }]]);
    // A 400 of Prism's validation is the operation's first 400 example, whatever was wrong.
    const emptyReason = await post('{"reason":""}', "application/json");
    expect([emptyReason.status, emptyReason.json()]).toEqual([400, contract.firstExample("pauseAgentByNumber", 400)]);
    expect(emptyReason.json().details[0].path).toBe("agent_number");
    const byId = await call("/agents/by-id/abc", { headers: TOKEN });
    expect([byId.status, byId.json()]).toEqual([400, contract.firstExample("getAgentById", 400)]);
    expect(byId.json().details[0].path).toBe("agent_id");
    // A decimal id that is a whole number (server: 400, must be integer).
    const decimal = await call("/agents/by-id/1.0", { headers: TOKEN });
    expect([decimal.status, decimal.json().id]).toEqual([200, 1]);
    // Unknown paths and wrong methods: the contract's body, but no Allow on the 405.
    for (const [path, method, status, error] of [["/1.0/agents", "GET", 404, "not found"], [pause, "GET", 405, "method not allowed"]] as const) {
      const res = await fetch(`${prism.url}${path}`, { method, headers: TOKEN });
      expect(res.status, `${method} ${path}`).toBe(status);
      expect(await res.json()).toEqual({ error });
      expect(res.headers.get("allow")).toBeNull();
    }
    // None of the server's response headers but its request id, and credentials allowed to any origin.
    const answer = await fetch(`${prism.url}/agents/by-id/1`, { headers: { ...TOKEN, Origin: "http://localhost:5173" } });
    for (const name of ["cache-control", "x-content-type-options", "strict-transport-security", "content-security-policy"]) {
      expect(answer.headers.get(name), name).toBeNull();
    }
    expect(answer.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(answer.headers.get("access-control-allow-credentials")).toBe("true");
    expect(answer.headers.get("vary")).toMatch(/\bOrigin\b/);
    // Named, not `*`: with credentials a browser takes `*` literally and lets a page read none of them.
    const limited = await fetch(`${prism.url}/agents/by-id/1`, { headers: { ...TOKEN, Origin: "http://localhost:5173", Prefer: "code=429" } });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("access-control-expose-headers")?.split(/,\s*/)).toEqual(expect.arrayContaining(["retry-after", "x-request-id", "www-authenticate", "sl-violations"]));
  });

  // The contract declares X-Request-Id on every answer: Prism's mock alone would send its example's id on each.
  it("gives every answer the request's id as the server does: the client's own when well formed, else a new UUID", async () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const ids = [];
    for (const [path, init] of [
      ["/agents", { headers: TOKEN }],
      ["/agents/by-number/1001/pause", { method: "POST", headers: TOKEN }],
      ["/agents/by-id/abc", { headers: TOKEN }],
      ["/agents", { headers: { ...TOKEN, Prefer: "code=429" } }],
      ["/agents", { method: "PUT", headers: TOKEN }],
      // Answered by the front door itself, bypassing Prism.
      ["/agents/by-id/%", { headers: TOKEN }],
    ] as const) {
      const own = await fetch(`${prism.url}${path}`, { ...init, headers: { ...init.headers, "X-Request-Id": "trace-42.a_b" } });
      expect(own.headers.get("x-request-id"), `${path} ${own.status}`).toBe("trace-42.a_b");
      const fresh = await fetch(`${prism.url}${path}`, { ...init, headers: { ...init.headers, "X-Request-Id": "not/one" } });
      expect(fresh.headers.get("x-request-id"), `${path} ${fresh.status}`).toMatch(uuid);
      ids.push(fresh.headers.get("x-request-id"));
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("answers POST /__mock/reset with 204 and no body, as the stateful mock does, having no state to put back; another method gets 405", async () => {
    const reset = await call("/__mock/reset", { method: "POST" });
    expect([reset.status, reset.text]).toEqual([204, ""]);
    const wrong = await call("/__mock/reset");
    expect(wrong.status).toBe(405);
    expect(wrong.json()).toEqual({ error: "method not allowed" });
  });

  // Last: stop() must take the whole process group down.
  it("stops cleanly, leaving no process behind", async () => {
    const { pid, url } = prism;
    expect(groupAlive(pid)).toBe(true);
    await prism.stop();
    expect(groupAlive(pid)).toBe(false);
    await expect(fetch(`${url}/agents`, { headers: TOKEN })).rejects.toThrow();
    await prism.stop(); // a second stop is harmless
  });
});

describe("npm run mock -- --delay 600ms (the stateless mock)", () => {
  let delayed: PrismHandle | undefined;
  beforeAll(async () => {
    delayed = await startPrism({ mode: "mock" }, ["--delay", "600ms"]);
  });
  afterAll(async () => {
    await delayed?.stop();
  });

  it("delays every answer by --delay, measured against one undelayed by Prefer: delay=0", async () => {
    const timed = async (headers: Record<string, string>) => {
      const started = performance.now();
      const res = await fetch(`${delayed!.url}/agents/by-id/1`, { headers: { ...TOKEN, ...headers } });
      expect(res.status).toBe(200);
      await res.json();
      return performance.now() - started;
    };
    const undelayed = await timed({ Prefer: "delay=0" });
    const slow = await timed({});
    expect(slow).toBeGreaterThanOrEqual(600);
    expect(slow).toBeGreaterThan(undelayed);
    expect(delayed!.output()).toContain("every answer delayed 600 ms");
  });
});

describe("npm run mock (the stateless mock) refuses what it cannot do, before listening", () => {
  const refusals: [string, string[], RegExp][] = [
    ["a fleet size, which only the stateful mock has", ["--agents", "5"], /--agents sizes the stateful mock's fleet: npm run mock -- --stateful --agents N/],
    ["a delay that is not a duration", ["--delay", "soon"], /--delay soon/],
    ["a delay over 10 s", ["--delay", "11s"], /--delay 11s: at most 10000 ms/],
  ];
  // The refusals are the script's, not Prism's help.
  it.each(refusals)("%s: exit 2, naming it", async (_what, args, message) => {
    const result = await runMockScript(args);
    expect(result.code, result.stdout + result.stderr).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toContain("prism mock");
  });
});
