// agentctl never writes the control and bidirectional characters of a
// stored pause reason raw to a terminal (client/terminal-text.ts), through a
// real server and the compiled CLI: the table and the key/value view show
// them as \uXXXX escapes, --json keeps the exact value as valid JSON, and the
// API itself answers the reason as stored.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { terminalSafe } from "../client/terminal-text.js";
import { loggedIn, paused } from "./helpers/agents.js";
import { runAgentctl, type AgentctlRun } from "./helpers/agentctl.js";
import { ADMIN_TOKEN, startTestServer, type TestServer } from "./helpers/server.js";

/** Red text, a line rewritten by CR, a fake new line, an RTL override, the 8-bit CSI and a line separator. */
const HOSTILE = "\u001b[31mred\u001b[0m\rover\nfake line \u202eevil\u202c \u009b2J \u2028end";
const AGENT = paused(7, HOSTILE);
const CLEAN = loggedIn(8);
/** Anything that could act on a terminal; the table's own new lines aside. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

function agentctl(server: TestServer, args: string[]): Promise<AgentctlRun> {
  return runAgentctl(args, { AGENTD_URL: server.url, AGENTD_TOKEN: ADMIN_TOKEN, AGENTD_CACERT: server.running.certPath });
}

describe("agentctl and hostile pause reasons", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({}, [AGENT, CLEAN]);
  });
  afterAll(async () => {
    await server?.close();
  });

  it("the API answers the reason as stored", async () => {
    expect((await server.call("GET", `/agents/by-number/${AGENT.number}`)).json).toMatchObject({ paused_reason: HOSTILE });
  });

  it("the table and the key/value view print it escaped, one line per agent", async () => {
    const list = await agentctl(server, ["agents", "list"]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).not.toMatch(RAW);
    expect(list.stdout.trimEnd().split("\n")).toHaveLength(3);
    expect(list.stdout).toContain("\\u001b[31mred\\u001b[0m\\u000dover\\u000afake line \\u202eevil\\u202c \\u009b2J \\u2028end");

    const one = await agentctl(server, ["agents", "get", "--number", AGENT.number]);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).not.toMatch(RAW);
    expect(one.stdout).toContain(terminalSafe(HOSTILE));
  });

  it("--json keeps the exact value, and writes none of those characters raw", async () => {
    const run = await agentctl(server, ["agents", "get", "--number", AGENT.number, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trimEnd()).not.toMatch(RAW);
    expect((JSON.parse(run.stdout) as { paused_reason: string }).paused_reason).toBe(HOSTILE);
  });

  it("a reason given to pause is echoed escaped", async () => {
    const run = await agentctl(server, ["agents", "pause", CLEAN.number, "--reason", "\u001b]0;owned\u0007 ok"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(`agent ${CLEAN.number} paused (reason: \\u001b]0;owned\\u0007 ok)\n`);
  });
});
