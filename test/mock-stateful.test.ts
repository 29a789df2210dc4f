// The stateful mock a front end develops against (`npm run mock --
// --stateful`), started as its users start it: real Prism in front, the
// service's own code behind, called over HTTP, and from a page in Chromium.
import { readdirSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { chromium } from "playwright-core";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run } from "../devkit/run.js";
import { expectValid, loadContract } from "./helpers/contract.js";
import { groupAlive, runMockScript } from "./helpers/prism.js";
import { startStatefulMockProcess, type StatefulMockProcess } from "./helpers/stateful-mock.js";
import { consume, ensureRabbit, RABBIT_URL, type BusConsumer } from "./helpers/rabbit.js";
import { startWebhookReceiver, type WebhookReceiver } from "./helpers/webhook-receiver.js";

const contract = loadContract();
const EXAMPLE_AGENTS: { id: number; number: string; logged: boolean; paused: boolean }[] = contract.document.components.examples.AgentList.value;
const TOKEN = { "X-Auth-Token": "any-front-end-token" };
const JSON_BODY = { ...TOKEN, "Content-Type": "application/json" };

interface Answer {
  status: number;
  headers: Headers;
  json: any;
  ms: number;
}

async function call(base: string, method: string, path: string, init: { headers?: Record<string, string>; body?: unknown } = {}): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(base + path, {
    method,
    headers: init.headers ?? TOKEN,
    ...(init.body === undefined ? {} : { body: typeof init.body === "string" ? init.body : JSON.stringify(init.body) }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, json: text === "" ? undefined : JSON.parse(text), ms: performance.now() - started };
}

const expectError = (answer: Answer, status: number, error: string): void => {
  expect(answer.status, JSON.stringify(answer.json)).toBe(status);
  expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
  expectValid(contract.schemaValidator("Error"), answer.json);
  expect(answer.json.error).toBe(error);
};

describe("npm run mock -- --stateful, on the contract's example agents, with a webhook receiver and the bus", () => {
  let mock: StatefulMockProcess;
  let receiver: WebhookReceiver;
  let consumer: BusConsumer;
  const exchange = `agentd-mock-${process.pid}-${Date.now()}`;
  let secret: string;
  const get = (path: string) => call(mock.url, "GET", path);

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    await ensureRabbit();
    consumer = await consume(exchange, "status.agent.#");
    // No AGENTD_WEBHOOK_SECRET: the mock generates one and prints it.
    mock = await startStatefulMockProcess([], { AGENTD_WEBHOOK_URLS: receiver.url, AGENTD_BUS_URL: RABBIT_URL, AGENTD_BUS_EXCHANGE: exchange });
    secret = /^ {2}secret: +(whsec_\S+) \(generated/m.exec(mock.stdout())?.[1] ?? "";
  });
  afterAll(async () => {
    mock?.kill();
    await receiver?.close();
    await consumer?.close();
  });

  it("prints a banner with the URL, a ready curl, the token rule, the fleet, the event sink and the secret", () => {
    const banner = mock.stdout();
    expect(banner).toContain(`agentd stateful mock on ${mock.url}`);
    expect(banner).toContain(`curl -H 'X-Auth-Token: any' ${mock.url}/agents`);
    expect(banner).toMatch(/tokens: +any non-empty X-Auth-Token/);
    expect(banner).toContain(`curl -X POST ${mock.url}/__mock/reset`);
    expect(banner).toMatch(new RegExp(`agents: +${EXAMPLE_AGENTS.length} \\(the contract's AgentList example\\)`));
    expect(banner).toContain(`webhook ${receiver.url}`);
    expect(banner).toMatch(new RegExp(`bus amqp://.*\\(exchange ${exchange}\\)`));
    expect(banner, "the bus password is not printed").not.toContain(`:${new URL(RABBIT_URL).password}@`);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{40,}={0,2}$/);
  });

  it("starts from exactly the AgentList example, in its example states", async () => {
    const list = await get("/agents");
    expect(list.status).toBe(200);
    expect(list.json).toEqual(contract.document.components.examples.AgentList.value);
  });

  it("pause with a reason shows by id, by number and in the list; unpause ends it; every answer is the contract's, with no violation", async () => {
    const answers: [string, number, Answer][] = [];
    const step = async (operationId: string, status: number, answer: Promise<Answer>): Promise<Answer> => {
      const done = await answer;
      answers.push([operationId, status, done]);
      expect(done.status, JSON.stringify(done.json)).toBe(status);
      return done;
    };
    await step("pauseAgentByNumber", 204, call(mock.url, "POST", "/agents/by-number/1001/pause", { headers: JSON_BODY, body: { reason: "lunch" } }));
    const paused = { id: 1, number: "1001", logged: true, paused: true, paused_reason: "lunch" };
    expect((await step("getAgentById", 200, get("/agents/by-id/1"))).json).toMatchObject(paused);
    expect((await step("getAgentByNumber", 200, get("/agents/by-number/1001"))).json).toMatchObject(paused);
    expect((await step("listAgents", 200, get("/agents"))).json.find((agent: { id: number }) => agent.id === 1)).toMatchObject(paused);

    await step("unpauseAgentByNumber", 204, call(mock.url, "POST", "/agents/by-number/1001/unpause", { headers: JSON_BODY, body: {} }));
    const unpaused = { id: 1, paused: false, paused_reason: null };
    expect((await step("getAgentById", 200, get("/agents/by-id/1"))).json).toMatchObject(unpaused);
    expect((await step("getAgentByNumber", 200, get("/agents/by-number/1001"))).json).toMatchObject(unpaused);
    expect((await step("listAgents", 200, get("/agents"))).json).toEqual(contract.document.components.examples.AgentList.value);

    for (const [operationId, status, answer] of answers) {
      expect(answer.headers.get("sl-violations"), `${operationId} ${status}`).toBeNull();
      if (status === 200) expectValid(contract.responseValidator(operationId, status), answer.json, `${operationId} ${status}`);
    }
  });

  it("answers 404 for an unknown agent and 409 for a logged-out one, with the contract's bodies, changing nothing", async () => {
    expectError(await call(mock.url, "POST", "/agents/by-number/9999/pause", { headers: JSON_BODY, body: {} }), 404, "no such agent");
    expectError(await get("/agents/by-id/9999"), 404, "no such agent");
    expectError(await call(mock.url, "POST", "/agents/by-number/1002/pause", { headers: JSON_BODY, body: { reason: "x" } }), 409, "not logged in");
    expectError(await call(mock.url, "POST", "/agents/by-number/1002/unpause", { headers: JSON_BODY, body: {} }), 409, "not logged in");
    expect((await get("/agents/by-number/1002")).json).toMatchObject({ logged: false, paused: false, paused_reason: null });
  });

  it("answers a malformed parameter or body with 400 and the contract's body, and Prism names the violation", async () => {
    const badPath = await get("/agents/by-number/12ab");
    expectError(badPath, 400, "invalid request");
    expect(badPath.json.details).toEqual([expect.objectContaining({ location: "path", path: "agent_number" })]);
    expect(badPath.headers.get("sl-violations")).toMatch(/agent_number/);

    const badBody = await call(mock.url, "POST", "/agents/by-number/1001/pause", { headers: JSON_BODY, body: { reason: 5 } });
    expectError(badBody, 400, "invalid request");
    expect(badBody.json.details).toEqual([expect.objectContaining({ location: "body", path: "/reason" })]);
    expect(badBody.headers.get("sl-violations")).toMatch(/reason/);
    expect((await get("/agents/by-number/1001")).json.paused).toBe(false);
  });

  // Prism answers malformed JSON in its own shape and passes null, 0 or false
  // on as no body (a pause without a reason); the server refuses all of them.
  it("answers malformed JSON, JSON that is not an object and a body over the limit as the server does, and changes nothing", async () => {
    const before = (await get("/agents/by-number/1001")).json;
    const cases: [string, string][] = [
      ["{not json", "is not valid JSON"],
      ["null", "must be object"],
      ["0", "must be object"],
      ["false", "must be object"],
      ['"lunch"', "must be object"],
      ["[]", "must be object"],
      ['["lunch"]', "must be object"],
    ];
    /** The server's headers, which its every answer carries (response-headers.ts), and a request id. */
    const asTheServer = (answer: Answer, what: string): void => {
      expect(answer.headers.get("cache-control"), what).toBe("no-store");
      expect(answer.headers.get("x-content-type-options"), what).toBe("nosniff");
      expect(answer.headers.get("content-security-policy"), what).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(answer.headers.get("x-request-id"), what).toMatch(/^[0-9a-f-]{36}$/);
    };
    for (const [body, message] of cases) {
      for (const action of ["pause", "unpause"]) {
        const answer = await call(mock.url, "POST", `/agents/by-number/1001/${action}`, { headers: JSON_BODY, body });
        expectError(answer, 400, "invalid request");
        expect(answer.json.details, `${action} ${body}`).toEqual([{ location: "body", path: "", message }]);
        asTheServer(answer, `${action} ${body}`);
      }
    }
    // Over the server's body limit (AGENTD_BODY_LIMIT), though valid: Prism alone would pass it on.
    const padded = `{"reason": "x"${" ".repeat(64 * 1024)}}`;
    const large = await call(mock.url, "POST", "/agents/by-number/1001/pause", { headers: JSON_BODY, body: padded });
    expectError(large, 413, "payload too large");
    asTheServer(large, "413");
    expect((await get("/agents/by-number/1001")).json).toEqual(before);
    // An empty JSON body is no body, as on the server.
    expect((await call(mock.url, "POST", "/agents/by-number/1001/unpause", { headers: JSON_BODY, body: "" })).status).toBe(204);
    // And of any type, as fetch sends `body: ""` (text/plain).
    expect((await call(mock.url, "POST", "/agents/by-number/1001/unpause", { headers: { ...TOKEN, "Content-Type": "text/plain;charset=UTF-8" }, body: "" })).status).toBe(204);
  });

  // Found by a front-end developer's walk: a BOM reached Prism, which answered in its HTTP
  // library's shape, and UTF-16 reached the service through Prism's proxy as UTF-8.
  it("takes a pause reason sent with a byte order mark or in UTF-16, as the server does", async () => {
    const send = (bytes: Buffer, type: string) =>
      fetch(`${mock.url}/agents/by-number/1001/pause`, { method: "POST", headers: { ...TOKEN, "Content-Type": type }, body: new Uint8Array(bytes) });
    const bom = await send(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"reason":"with a mark"}')]), "application/json");
    expect(bom.status, await bom.text()).toBe(204);
    expect((await get("/agents/by-number/1001")).json).toMatchObject({ paused: true, paused_reason: "with a mark" });
    const utf16 = await send(Buffer.from('{"reason":"en UTF-16 ☕"}', "utf16le"), "application/json; charset=utf-16le");
    expect(utf16.status, await utf16.text()).toBe(204);
    expect((await get("/agents/by-number/1001")).json).toMatchObject({ paused: true, paused_reason: "en UTF-16 ☕" });
    expect((await call(mock.url, "POST", "/agents/by-number/1001/unpause")).status).toBe(204);
  });

  it("answers a GET that carries a body with the server's 400, whatever the body (fetch cannot send one: node:http does)", async () => {
    for (const [type, body] of [["application/json", "{}"], ["text/plain", "x"]] as const) {
      const answer = await new Promise<{ status: number; json: any }>((resolve, reject) => {
        const request = http.request(`${mock.url}/agents`, { method: "GET", headers: { ...TOKEN, "content-type": type, "content-length": String(Buffer.byteLength(body)) } }, (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () => resolve({ status: response.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString("utf8")) }));
        });
        request.on("error", reject);
        request.end(body);
      });
      expect(answer.status, `${type} ${body}`).toBe(400);
      expect(answer.json).toEqual({ error: "invalid request", details: [{ location: "body", path: "", message: "must be absent: a GET takes no body" }] });
    }
  });

  it("sees a body's headers after two thousand others, as the server does: a text body is still 415", async () => {
    const filler = Object.fromEntries(Array.from({ length: 1_997 }, (_, i) => [`a${i}`, "b"]));
    const status = await new Promise<number>((resolve, reject) => {
      const request = http.request(
        `${mock.url}/agents/by-number/1001/unpause`,
        { method: "POST", headers: { ...TOKEN, ...filler, "content-type": "text/plain", "content-length": "3" } },
        (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        },
      );
      request.on("error", reject);
      request.end("now");
    });
    expect(status).toBe(415);
  });

  it("answers HEAD as the server does (405 with Allow on a contract path, 404 off them), not with Prism's 500", async () => {
    const head = await fetch(`${mock.url}/agents`, { method: "HEAD", headers: TOKEN });
    expect(head.status).toBe(405);
    expect(head.headers.get("allow")).toBe("GET");
    expect((await fetch(`${mock.url}/nowhere`, { method: "HEAD", headers: TOKEN })).status).toBe(404);
  });

  // Each of these made Prism answer 500 and exit, taking the mock down with it.
  it("answers what Prism fails on (bad percent-encoding, a Content-Type that does not parse, a body thousands deep) as the server does, and stays up", async () => {
    for (const path of ["/agents/by-id/%", "/agents/by-id/%C0%80", "/agents?x=%"]) {
      const answer = await call(mock.url, "GET", path);
      expectError(answer, 400, "invalid request");
    }
    // Named as the server names it, not as the service behind Prism's URL (with its base path).
    expect((await call(mock.url, "GET", "/agents/by-id/%")).json.details).toEqual([{ location: "path", path: "", message: "is not a valid percent-encoded path" }]);
    const pauseAs = (type: string) => call(mock.url, "POST", "/agents/by-number/1001/pause", { headers: { ...TOKEN, "Content-Type": type }, body: '{"reason":"x"}' });
    expectError(await pauseAs(";;;/"), 415, "unsupported media type");
    // The server reads this one as JSON (a parameter without a value is ignored): so does the mock, through Prism.
    expect((await pauseAs("application/json; charset")).status).toBe(204);
    expect((await call(mock.url, "POST", "/agents/by-number/1001/unpause")).status).toBe(204);
    // Through Prism, a forced answer stays forced: nothing changes.
    const forced = await call(mock.url, "POST", "/agents/by-number/1001/pause", { headers: { ...TOKEN, "Content-Type": "application/json; charset", Prefer: "code=409" }, body: '{"reason":"x"}' });
    expectError(forced, 409, "not logged in");
    expect((await get("/agents/by-number/1001")).json.paused).toBe(false);
    // What skips Prism carries Prism's CORS all the same, or a browser page could not read it.
    const fromPage = await call(mock.url, "POST", "/agents/by-number/1001/pause", {
      headers: { ...JSON_BODY, Origin: "http://localhost:5173" },
      body: `${"[".repeat(5000)}${"]".repeat(5000)}`,
    });
    expectError(fromPage, 400, "invalid request");
    expect(fromPage.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(fromPage.headers.get("access-control-allow-credentials")).toBe("true");
    for (const body of [`${"[".repeat(5000)}${"]".repeat(5000)}`, `${'{"a":'.repeat(2000)}1${"}".repeat(2000)}`]) {
      const answer = await call(mock.url, "POST", "/agents/by-number/1001/pause", { headers: JSON_BODY, body });
      expectError(answer, 400, "invalid request");
    }
    expect((await get("/agents/by-number/1001")).status).toBe(200);
  });

  it("answers a request without a token with 401 and the contract's body", async () => {
    expectError(await call(mock.url, "GET", "/agents", { headers: {} }), 401, "invalid token or unauthorized");
    expectError(await call(mock.url, "POST", "/agents/by-number/1001/pause", { headers: { "Content-Type": "application/json" }, body: {} }), 401, "invalid token or unauthorized");
  });

  it("answers an unknown path with 404 and the contract's body", async () => {
    expectError(await get("/queues"), 404, "not found");
    // Prism's proxy forwarded this one without its empty segment: 200 for agent 1.
    expectError(await get("/agents//by-id/1"), 404, "not found");
  });

  // A forced answer is the contract's only for a request the server would
  // take: off the contract Prism had nothing to answer with (it said 500).
  it("forces no answer for a request the server refuses: 404 and 405 off the contract, the server's 400 naming the field, and nothing changes", async () => {
    for (const prefer of [{ Prefer: "code=200" }, {}] as Record<string, string>[]) {
      expectError(await call(mock.url, "GET", "/1.0/agents", { headers: { ...TOKEN, ...prefer } }), 404, "not found");
      expectError(await call(mock.url, "POST", "/agents/by-number/1001/pausex", { headers: { ...JSON_BODY, ...prefer }, body: {} }), 404, "not found");
    }
    const wrongMethod = await call(mock.url, "DELETE", "/agents/by-number/1001/pause", { headers: { ...TOKEN, Prefer: "code=409" } });
    expectError(wrongMethod, 405, "method not allowed");
    expect(wrongMethod.headers.get("allow")).toBe("POST");
    expectError(await call(mock.url, "GET", "/agents/by-number/1001?__code=409", { headers: {} }), 401, "invalid token or unauthorized");
    const badBody = await call(mock.url, "POST", "/agents/by-number/1001/pause", { headers: { ...JSON_BODY, Prefer: "code=409" }, body: { reason: 5 } });
    expectError(badBody, 400, "invalid request");
    expect(badBody.json.details).toEqual([expect.objectContaining({ location: "body", path: "/reason" })]);
    expect((await get("/agents/by-number/1001")).json).toMatchObject({ paused: false, paused_reason: null });
  });

  it("Prefer: code=503 on a read and code=409 on a pause answer the contract's examples and change no state", async () => {
    const forcedRead = await call(mock.url, "GET", "/agents/by-number/1001", { headers: { ...TOKEN, Prefer: "code=503" } });
    expect(forcedRead.status).toBe(503);
    expect(forcedRead.json).toEqual(contract.firstExample("getAgentByNumber", 503));
    const forcedPause = await call(mock.url, "POST", "/agents/by-number/1001/pause", { headers: { ...JSON_BODY, Prefer: "code=409" }, body: { reason: "forced" } });
    expect(forcedPause.status).toBe(409);
    expect(forcedPause.json).toEqual(contract.firstExample("pauseAgentByNumber", 409));
    // Its own request id, as the server gives one, not the contract's example.
    expect(forcedPause.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(forcedPause.headers.get("x-request-id")).not.toBe(forcedRead.headers.get("x-request-id"));
    expect((await get("/agents/by-number/1001")).json).toMatchObject({ paused: false, paused_reason: null });
  });

  // Prism's query forms, for a request that cannot set a header (a link, a
  // request without a preflight): forced as Prefer is, not refused as
  // unknown parameters by the service behind Prism.
  it("?__code=409 on a pause and ?__code=503&__example=… on a read answer the contract's examples and change no state; a Prefer header wins over them, as in Prism", async () => {
    const forcedPause = await call(mock.url, "POST", "/agents/by-number/1001/pause?__code=409", { headers: JSON_BODY, body: { reason: "forced" } });
    expect([forcedPause.status, forcedPause.json]).toEqual([409, contract.firstExample("pauseAgentByNumber", 409)]);
    const forcedRead = await call(mock.url, "GET", "/agents/by-number/1001?__code=503&__example=databaseUnavailable", { headers: TOKEN });
    expect([forcedRead.status, forcedRead.json]).toEqual([503, { error: "database unavailable" }]);
    expect((await get("/agents/by-number/1001")).json).toMatchObject({ paused: false, paused_reason: null });
    const headerWins = await call(mock.url, "GET", "/agents/by-number/1001?__code=503", { headers: { ...TOKEN, Prefer: "code=404" } });
    expect([headerWins.status, headerWins.json]).toEqual([404, contract.firstExample("getAgentByNumber", 404)]);
  });

  it("gives a malformed Prefer (code=abc) the contract's 400 body, not Prism's problem+json", async () => {
    const answer = await call(mock.url, "GET", "/agents", { headers: { ...TOKEN, Prefer: "code=abc" } });
    expectError(answer, 400, "invalid request");
    expect(answer.json.details).toEqual([expect.objectContaining({ location: "header", path: "Prefer" })]);
    expectError(await call(mock.url, "GET", "/agents", { headers: { ...TOKEN, Prefer: "delay=soon" } }), 400, "invalid request");
    expectError(await call(mock.url, "GET", "/agents", { headers: { ...TOKEN, Prefer: "delay=10001" } }), 400, "invalid request");
  });

  it("delays one answer by Prefer: delay=<ms>, measured against an undelayed one", async () => {
    const undelayed = await get("/agents/by-id/3");
    const delayed = await call(mock.url, "GET", "/agents/by-id/3", { headers: { ...TOKEN, Prefer: "delay=1200" } });
    expect(delayed.status).toBe(200);
    expect(delayed.json).toEqual(undelayed.json);
    expect(delayed.ms).toBeGreaterThanOrEqual(1200);
    expect(delayed.ms).toBeGreaterThan(undelayed.ms);
  });

  it("sends a signed agentPaused and agentUnpaused webhook, and the same events on the bus, for each change; the webhooks verify with the Standard Webhooks algorithm", async () => {
    receiver.received.length = 0;
    consumer.messages.length = 0;
    expect((await call(mock.url, "POST", "/agents/by-number/1001/pause", { headers: JSON_BODY, body: { reason: "webhook" } })).status).toBe(204);
    expect((await call(mock.url, "POST", "/agents/by-number/1001/unpause", { headers: JSON_BODY, body: {} })).status).toBe(204);
    await expect.poll(() => [receiver.received.length, consumer.messages.length], { timeout: 15_000 }).toEqual([2, 2]);
    const verifier = new Webhook(secret);
    const events = receiver.received.map(({ headers, body }) => verifier.verify(body, headers as Record<string, string>) as { name: string; data: unknown });
    expectValid(contract.validatorAt("#/webhooks/agentPaused/post/requestBody/content/application~1json/schema"), events[0]);
    expectValid(contract.validatorAt("#/webhooks/agentUnpaused/post/requestBody/content/application~1json/schema"), events[1]);
    expect(events.map((event) => event.name)).toEqual(["agent_paused", "agent_unpaused"]);
    expect(consumer.messages.map((message) => message.body)).toEqual(events);
    expect(events[0]!.data).toMatchObject({ agent_id: 1, agent_number: "1001", paused: true, paused_reason: "webhook" });
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString("base64")}`).verify(receiver.received[0]!.body, receiver.received[0]!.headers as Record<string, string>)).toThrow();
  });

  it("serves a page from another origin in Chromium: the page pauses an agent with fetch (CORS preflight included) and shows it paused", async () => {
    const page = `<!doctype html><meta charset="utf-8"><p id="agent">loading</p><script>
      (async () => {
        const headers = { "X-Auth-Token": "browser-token", "Content-Type": "application/json" };
        const pause = await fetch("${mock.url}/agents/by-number/1001/pause", { method: "POST", headers, body: JSON.stringify({ reason: "from the browser" }) });
        const agent = await (await fetch("${mock.url}/agents/by-number/1001", { headers: { "X-Auth-Token": "browser-token" } })).json();
        document.getElementById("agent").textContent = pause.status + " " + (agent.paused ? "paused: " + agent.paused_reason : "available");
      })().catch((error) => (document.getElementById("agent").textContent = "failed: " + error));
    </script>`;
    const site = http.createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(page));
    await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
    const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    const browser = await chromium.launch({
      executablePath: "/usr/bin/chromium",
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"],
    });
    try {
      const tab = await browser.newPage();
      // X-Auth-Token and a JSON body make the pause a non-simple request:
      // Chromium sends it only after the mock's preflight answer allowed it.
      await tab.goto(origin);
      await expect.poll(() => tab.locator("#agent").textContent(), { timeout: 15_000 }).toBe("204 paused: from the browser");
      expect((await get("/agents/by-number/1001")).json).toMatchObject({ paused: true, paused_reason: "from the browser" });
    } finally {
      await browser.close();
      site.close();
      await call(mock.url, "POST", "/agents/by-number/1001/unpause", { headers: JSON_BODY, body: {} });
    }
  });

  it("POST /__mock/reset puts every agent back as at start (by id, by number, in the list) and drops the events not yet delivered", async () => {
    const example = contract.document.components.examples.AgentList.value as { id: number; number: string }[];
    // The paused_reason of every webhook the receiver accepted.
    const delivered = (): (string | null)[] =>
      receiver.received.filter((hook) => hook.status === 200).map((hook) => (JSON.parse(hook.body) as { data: { paused_reason: string | null } }).data.paused_reason);
    receiver.received.length = 0;
    // The receiver answers 503: the webhooks of these changes stay in the outbox, to be retried.
    receiver.answer = () => 503;
    try {
      expect((await call(mock.url, "POST", "/agents/by-number/1003/unpause", { headers: JSON_BODY, body: {} })).status).toBe(204);
      expect((await call(mock.url, "POST", "/agents/by-number/1001/pause", { headers: JSON_BODY, body: { reason: "before the reset" } })).status).toBe(204);
      await expect.poll(() => receiver.received.length, { timeout: 15_000 }).toBeGreaterThan(1);
      expect((await get("/agents/by-number/1001")).json).toMatchObject({ paused: true, paused_reason: "before the reset" });

      const reset = await call(mock.url, "POST", "/__mock/reset", { headers: {} });
      expect(reset.status).toBe(204);
      expect(reset.json).toBeUndefined();
      expect(reset.headers.get("x-request-id")).not.toBeNull();
      expect((await get("/agents")).json).toEqual(example);
      for (const agent of example) {
        expect((await get(`/agents/by-id/${agent.id}`)).json).toEqual(agent);
        expect((await get(`/agents/by-number/${agent.number}`)).json).toEqual(agent);
      }

      // Delivered in order per agent: were the refused event still queued,
      // it would reach the receiver before this one.
      receiver.answer = () => 200;
      expect((await call(mock.url, "POST", "/agents/by-number/1001/pause", { headers: JSON_BODY, body: { reason: "after the reset" } })).status).toBe(204);
      await expect.poll(delivered, { timeout: 15_000 }).toContain("after the reset");
      expect(delivered()).toEqual(["after the reset"]);
    } finally {
      receiver.answer = () => 200;
      await call(mock.url, "POST", "/__mock/reset", { headers: {} });
    }
  });

  it("POST /__mock/reset waits for a delivery under way, and none of the events recorded before it arrives after its 204", async () => {
    const delivered = (): string[] =>
      receiver.received.map((hook) => {
        const { name, data } = JSON.parse(hook.body) as { name: string; data: { agent_number: string; paused_reason: string } };
        return `${name} ${data.agent_number} ${data.paused_reason}`;
      });
    const change = async (number: string, action: "pause" | "unpause", reason?: string): Promise<void> => {
      const body = reason === undefined ? {} : { reason };
      expect((await call(mock.url, "POST", `/agents/by-number/${number}/${action}`, { headers: JSON_BODY, body })).status).toBe(204);
    };
    receiver.received.length = 0;
    // A slow receiver (within the webhook time-out): its first event is in
    // flight while four more are recorded behind it, and the second still
    // is when the reset comes.
    receiver.delayMs = 3_000;
    try {
      await change("1003", "unpause");
      await expect.poll(() => receiver.inFlight, { timeout: 15_000 }).toBe(1);
      await change("1001", "pause", "one");
      await change("1001", "unpause");
      await change("1001", "pause", "two");
      await change("1001", "unpause");
      // The relay's next round takes the four from the outbox, and delivers them one after another from memory.
      await expect.poll(() => [receiver.received.length, receiver.inFlight], { timeout: 15_000 }).toEqual([1, 1]);
      expect((await call(mock.url, "POST", "/__mock/reset", { headers: {} })).status).toBe(204);
      // The delivery under way ended before the answer; the other three are dropped.
      expect(delivered()).toEqual(["agent_unpaused 1003 ", "agent_paused 1001 one"]);

      receiver.delayMs = 0;
      await change("1001", "pause", "after");
      await expect.poll(delivered, { timeout: 15_000 }).toContain("agent_paused 1001 after");
      expect(delivered()).toEqual(["agent_unpaused 1003 ", "agent_paused 1001 one", "agent_paused 1001 after"]);
    } finally {
      receiver.delayMs = 0;
      await call(mock.url, "POST", "/__mock/reset", { headers: {} });
    }
  });

  it("answers another method on /__mock/reset with the server's 405 and Allow: POST, changing nothing", async () => {
    expect((await call(mock.url, "POST", "/agents/by-number/1001/pause", { headers: JSON_BODY, body: { reason: "kept" } })).status).toBe(204);
    try {
      const wrong = await call(mock.url, "GET", "/__mock/reset", { headers: {} });
      expectError(wrong, 405, "method not allowed");
      expect(wrong.headers.get("allow")).toBe("POST");
      expect((await get("/agents/by-number/1001")).json).toMatchObject({ paused: true, paused_reason: "kept" });
    } finally {
      await call(mock.url, "POST", "/__mock/reset", { headers: {} });
    }
  });
});

describe("npm run mock -- --stateful --agents 1000 --delay 600ms", () => {
  let mock: StatefulMockProcess | undefined;
  afterAll(() => mock?.kill());

  it("holds exactly 1,000 agents, the example agents first and every state represented, each valid", async () => {
    mock = await startStatefulMockProcess(["--agents", "1000", "--delay", "600ms"]);
    expect(mock.stdout()).toMatch(/agents: +1000, in memory/);
    const list = await call(mock.url, "GET", "/agents", { headers: { ...TOKEN, Prefer: "delay=0" } });
    expect(list.status).toBe(200);
    expectValid(contract.responseValidator("listAgents", 200), list.json);
    expect(list.json).toHaveLength(1000);
    expect(list.json.slice(0, EXAMPLE_AGENTS.length)).toEqual(contract.document.components.examples.AgentList.value);
    expect(new Set(list.json.map((agent: { id: number }) => agent.id)).size).toBe(1000);
    expect(new Set(list.json.map((agent: { number: string }) => agent.number)).size).toBe(1000);
    const states = new Set(list.json.map((a: { logged: boolean; paused: boolean; paused_reason: string | null }) => `${a.logged}/${a.paused}/${a.paused_reason !== null}`));
    expect([...states].sort()).toEqual(["false/false/false", "true/false/false", "true/true/false", "true/true/true"]);
  });

  it("delays every answer by --delay, measured against one undelayed by Prefer: delay=0", async () => {
    const undelayed = await call(mock!.url, "GET", "/agents/by-id/500", { headers: { ...TOKEN, Prefer: "delay=0" } });
    const delayed = await call(mock!.url, "GET", "/agents/by-id/500");
    expect(delayed.status).toBe(200);
    expect(delayed.ms).toBeGreaterThanOrEqual(600);
    expect(delayed.ms).toBeGreaterThan(undelayed.ms);
  });

  it("POST /__mock/reset puts the generated agents back too", async () => {
    const now = { ...TOKEN, Prefer: "delay=0" };
    const before = await call(mock!.url, "GET", "/agents", { headers: now });
    const changed = before.json.filter((agent: { id: number; logged: boolean }) => agent.id > 500 && agent.logged).slice(0, 4) as { number: string; paused: boolean }[];
    expect(changed.map((agent) => agent.paused)).toContain(true);
    expect(changed.map((agent) => agent.paused)).toContain(false);
    for (const agent of changed) {
      const path = `/agents/by-number/${agent.number}/${agent.paused ? "unpause" : "pause"}`;
      expect((await call(mock!.url, "POST", path, { headers: { ...JSON_BODY, Prefer: "delay=0" }, body: agent.paused ? {} : { reason: "changed" } })).status).toBe(204);
    }
    expect((await call(mock!.url, "GET", "/agents", { headers: now })).json).not.toEqual(before.json);
    expect((await call(mock!.url, "POST", "/__mock/reset", { headers: {} })).status).toBe(204);
    expect((await call(mock!.url, "GET", "/agents", { headers: now })).json).toEqual(before.json);
  });

  it("stops every process it started within 10 s of Ctrl-C (SIGINT to npm), leaving no temporary file, and a restart is fresh", async () => {
    const first = mock!;
    expect((await call(first.url, "POST", "/agents/by-number/1001/pause", { headers: { ...JSON_BODY, Prefer: "delay=0" }, body: { reason: "before the restart" } })).status).toBe(204);
    await first.interrupt();
    await expect.poll(() => groupAlive(first.pid), { timeout: 10_000, interval: 100 }).toBe(false);
    // tsx's compile cache (tsx-<uid>) is the loader's, shared by every tsx run, not the mock's.
    expect(readdirSync(first.tmp).filter((name) => !/^tsx-\d+$/.test(name))).toEqual([]);

    mock = await startStatefulMockProcess(["--agents", "1000"]);
    const agent = await call(mock.url, "GET", "/agents/by-number/1001");
    expect(agent.json).toMatchObject({ paused: false, paused_reason: null });
  });

  it("stops, saying so, when its Prism dies: it would answer nothing but errors", async () => {
    const running = mock!;
    // Prism runs in the mock's process group (so the terminal's Ctrl-C reaches it).
    const listing = await run("ps", ["-o", "pid=,args=", "-g", String(running.pid)]);
    const prism = listing.stdout.split("\n").find((line) => line.includes("prism proxy"));
    expect(prism, listing.stdout).toBeDefined();
    process.kill(Number(prism!.trim().split(/\s+/)[0]), "SIGKILL");
    await expect.poll(() => groupAlive(running.pid), { timeout: 10_000, interval: 100 }).toBe(false);
    expect(running.output()).toContain("npm run mock: Prism exited; stopping the mock.");
  });
});

describe("npm run mock -- --stateful refuses what it cannot do, before listening", () => {
  const refusals: [string, string[], Record<string, string>, RegExp][] = [
    ["fewer agents than the examples", ["--agents", "2"], {}, /--agents 2: must be a whole number from 3/],
    ["a fleet that is not a number", ["--agents", "many"], {}, /--agents many/],
    ["more than 100,000 agents", ["--agents", "100001"], {}, /--agents 100001/],
    ["a delay that is not a duration", ["--delay", "soon"], {}, /--delay soon/],
    ["a delay over 10 s", ["--delay", "11s"], {}, /--delay 11s: at most 10000 ms/],
    ["a host beyond loopback", ["--host", "0.0.0.0"], {}, /--host 0\.0\.0\.0: .*loopback only/],
    ["an older release", ["--release", "15.18"], {}, /--stateful runs the service's current code.*npm run mock -- --release 15\.18/],
    ["a real database", [], { AGENTD_DATABASE_URL: "postgres://postgres@127.0.0.1:5432/test" }, /AGENTD_DATABASE_URL is set/],
    ["an option it does not know", ["--dynamic"], {}, /--dynamic/],
  ];
  // The refusals are the script's own (runMockScript: without npm in front).
  it.each(refusals)("%s: exit 2, naming it", async (_what, args, env, message) => {
    const result = await runMockScript(["--stateful", ...args], env);
    expect(result.code, result.stdout + result.stderr).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).not.toContain("agentd stateful mock on");
  });
});
