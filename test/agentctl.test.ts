// The agentctl CLI as users run it: compiled to JavaScript (dist/) and spawned
// as a real child process (`node agentctl.js ...`), against the Prism mock of
// openapi.yaml by default, or any running server when AGENTD_CLIENT_TEST_URL
// (+ AGENTD_CLIENT_TEST_TOKEN, optional AGENTD_CLIENT_TEST_CA) is set; and,
// in the last describe, against the real server started in this process.
import { mkdtemp, rm } from "node:fs/promises";
import { createServer as createHttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { run } from "../devkit/run.js";
import { BASE_PATH } from "../server/contract.js";
import { escapeRegExp } from "../server/escape-regexp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectValid, loadContract } from "./helpers/contract.js";
import { freePort } from "../devkit/ports.js";
import { suiteAgents } from "./helpers/agents.js";
import { loadOrCreateCertificate } from "../server/tls/certificate.js";
import { agentctlBin, runAgentctl, type AgentctlRun } from "./helpers/agentctl.js";
import { ADMIN_TOKEN, useTestServer } from "./helpers/server.js";
import { startMockOrExternalTarget, type Target } from "./helpers/targets.js";

const contract = loadContract();

let target: Target;
// Prism answers with the contract's examples whatever the path, and accepts any token.
const isMock = (): boolean => !target.stateful;
/** Environment pointing agentctl at the target. */
const targetEnv = (): Record<string, string> => ({
  AGENTD_URL: target.url,
  AGENTD_TOKEN: target.token,
  ...(target.ca !== null ? { AGENTD_CACERT: target.ca } : {}),
});

function parseJson(run: AgentctlRun): unknown {
  try {
    return JSON.parse(run.stdout);
  } catch {
    throw new Error(`stdout is not JSON (exit ${run.code}):\n${run.stdout}\nstderr:\n${run.stderr}`);
  }
}

beforeAll(async () => {
  target = await startMockOrExternalTarget();
});

afterAll(async () => {
  await target?.close();
});

describe("agents list", () => {
  it("prints an aligned table with one row per agent", async () => {
    const run = await runAgentctl(["agents", "list"], targetEnv());
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+NUMBER\s+LOGGED\s+PAUSED\s+REASON\s+EXTENSION\s+CONTEXT\s+INTERFACE$/);
    // Columns line up: every row's NUMBER starts where the header's does.
    const numberColumn = lines[0]!.indexOf("NUMBER");
    for (const line of lines.slice(1)) expect(line.slice(numberColumn)).toMatch(/^\d+\s/);
    if (isMock()) {
      expect(lines).toHaveLength(4);
      expect(lines[3]).toMatch(/^3\s+1003\s+yes\s+yes\s+lunch break\s+1003\s+default\s+SIP\/carol$/);
      expect(lines[2]).toMatch(/^2\s+1002\s+no\s+no\s+-\s+-\s+-\s+-$/);
    }
  });

  it("--json prints the contract's list, before or after the command", async () => {
    for (const args of [["--json", "agents", "list"], ["agents", "list", "--json"]]) {
      const run = await runAgentctl(args, targetEnv());
      expect(run.code, run.stderr).toBe(0);
      expectValid(contract.responseValidator("listAgents", 200), parseJson(run));
    }
  });

  it("takes --url and --token as options as well as from the environment", async () => {
    const run = await runAgentctl(["--url", target.url, "--token", target.token, ...(target.ca !== null ? ["--cacert", target.ca] : []), "agents", "list", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expectValid(contract.responseValidator("listAgents", 200), parseJson(run));
  });
});

describe("agents get", () => {
  it("--id prints the agent as key/value lines", async () => {
    const run = await runAgentctl(["agents", "get", "--id", "1"], targetEnv());
    if (!isMock() && run.code === 1) {
      // A server without agent 1 must say so through the contract's error.
      expect(run.stderr).toBe("error: 404 no such agent\n");
      return;
    }
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^id:\s+1$/m);
    expect(run.stdout).toMatch(/^origin_uuid:\s+[0-9a-f-]{36}$/m);
    expect(run.stdout).toMatch(/^paused_reason:\s+\S+$/m);
  });

  it("--number --json prints the contract's agent status", async () => {
    const run = await runAgentctl(["agents", "get", "--number", "1001", "--json"], targetEnv());
    expect(run.code, run.stderr).toBe(0);
    expectValid(contract.responseValidator("getAgentByNumber", 200), parseJson(run));
  });

  it("an API error exits 1 with the status and the contract's error", async () => {
    const run = await runAgentctl(["agents", "get", "--number", "12a", "--json"], targetEnv());
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: 400 invalid request\n {2}path agent_number: /);
    const body = parseJson(run);
    expect(body).toMatchObject({ status: 400, error: "invalid request" });
  });
});

describe("agents pause", () => {
  it("pauses with a reason and says so", async () => {
    const run = await runAgentctl(["agents", "pause", "1001", "--reason", "lunch break"], targetEnv());
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe("agent 1001 paused (reason: lunch break)\n");
  });

  it("--json prints what was done", async () => {
    const run = await runAgentctl(["agents", "pause", "1001", "--json"], targetEnv());
    expect(run.code, run.stderr).toBe(0);
    expect(parseJson(run)).toEqual({ number: "1001", paused: true, paused_reason: null });
  });
});

describe("agents unpause", () => {
  it("unpauses and says so", async () => {
    const run = await runAgentctl(["agents", "unpause", "1003"], targetEnv());
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe("agent 1003 unpaused\n");
  });

  it("--json prints what was done", async () => {
    const run = await runAgentctl(["agents", "unpause", "1003", "--json"], targetEnv());
    expect(run.code, run.stderr).toBe(0);
    expect(parseJson(run)).toEqual({ number: "1003", paused: false, paused_reason: null });
  });
});

describe("usage errors exit 2", () => {
  const cases: [string, string[], RegExp][] = [
    ["neither --id nor --number", ["agents", "get"], /exactly one of --id or --number/],
    ["both --id and --number", ["agents", "get", "--id", "1", "--number", "1"], /cannot be used with/],
    ["a non-numeric --id", ["agents", "get", "--id", "one"], /--id .* is invalid/],
    ["pause without a number", ["agents", "pause"], /missing required argument 'number'/],
    ["unpause without a number", ["agents", "unpause"], /missing required argument 'number'/],
    ["unpause with a reason", ["agents", "unpause", "1003", "--reason", "x"], /unknown option '--reason'/],
    ["an unknown command", ["agents", "remove"], /unknown command 'remove'/],
    ["an unknown option", ["agents", "list", "--colour"], /unknown option '--colour'/],
    // An empty number would be sent as `/agents/by-number//pause`, a path the API does not have.
    ["an empty number to pause", ["agents", "pause", ""], /'number'\. must not be empty/],
    ["an empty number to unpause", ["agents", "unpause", ""], /'number'\. must not be empty/],
    ["an empty --number", ["agents", "get", "--number", ""], /--number <number>' argument '' is invalid\. must not be empty/],
    ["a --number of ..", ["agents", "get", "--number", ".."], /--number <number>' argument '\.\.' is invalid\. must not be \. or \.\./],
    ["a number of . to pause", ["agents", "pause", "."], /'number'\. must not be \. or \.\./],
    ["a --url without a scheme", ["--url", "127.0.0.1:9493/1.0", "agents", "list"], /--url <url>' argument '127\.0\.0\.1:9493\/1\.0' is invalid\. is not an absolute URL/],
    // fetch would refuse it with a bare TypeError repeating the password (found by a scripting walk).
    ["a --url with a user name and password", ["--url", "https://user:pw@localhost:9493/1.0", "agents", "list"], /is invalid\. holds a user name or password, which the service does not read/],
    ["a --url with a query", ["--url", "https://localhost:9493/1.0?x=1", "agents", "list"], /is invalid\. has a query or a fragment/],
    ["a --url with a fragment", ["--url", "https://localhost:9493/1.0#top", "agents", "list"], /is invalid\. has a query or a fragment/],
    ["a --timeout of 0", ["--timeout", "0", "agents", "list"], /--timeout <seconds>' argument '0' is invalid\. must be a number of seconds above 0/],
    ["a --timeout that is not a number", ["--timeout", "5s", "agents", "list"], /--timeout <seconds>' argument '5s' is invalid/],
  ];
  for (const [label, args, message] of cases) {
    it(label, async () => {
      const run = await runAgentctl(args, targetEnv());
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(run.stdout).toBe("");
    });
  }

  it("a missing token, or one of whitespace only", async () => {
    for (const env of [{ AGENTD_URL: target.url }, { AGENTD_URL: target.url, AGENTD_TOKEN: " \n" }] as Record<string, string>[]) {
      const run = await runAgentctl(["agents", "list"], env);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/missing token: pass --token or set AGENTD_TOKEN/);
    }
  });

  it("an AGENTD_URL that is not an http(s) URL", async () => {
    const run = await runAgentctl(["agents", "list"], { ...targetEnv(), AGENTD_URL: "ftp://localhost/1.0" });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/from env 'AGENTD_URL' is invalid\. has the scheme ftp: where https: \(or http:, for the mocks\) is expected/);
  });

  it("a token with a character no token holds, without printing the token", async () => {
    const run = await runAgentctl(["agents", "list"], { ...targetEnv(), AGENTD_TOKEN: "sjLZzwsAC9PW\u2026" });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^error: the token holds a character a token cannot hold \(U\+2026 at position 13\)/);
    expect(run.stderr).not.toContain("sjLZ");
    expect(run.stdout).toBe("");
  });

  it("an unreadable --cacert file", async () => {
    const run = await runAgentctl(["agents", "list"], { ...targetEnv(), AGENTD_CACERT: "/nonexistent/ca.pem" });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/cannot read CA certificate file \/nonexistent\/ca\.pem/);
  });

  it("--help is not an error, and names the exit codes", async () => {
    expect((await runAgentctl(["--help"])).stdout).toContain("Exit codes: 0 success, 1 API or network error (a time-out included), 2 usage error.");
    const run = await runAgentctl(["agents", "--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/list/);
    expect(run.stdout).toMatch(/pause/);
    expect(run.stdout).toMatch(/unpause/);
  });
});

// Found by a scripting walk: a reader that stops early (`| head -1`) made
// agentctl die of an unhandled EPIPE, with a stack trace and exit 1.
describe("standard output that fails", () => {
  let fleet: ReturnType<typeof createHttpServer>;
  let url: string;
  beforeAll(async () => {
    // Far more than a pipe holds (64 KiB), so the writer meets the closed pipe.
    const agents = Array.from({ length: 3000 }, (_, i) => ({
      id: i + 1, origin_uuid: "6f1e1f5c-6c4b-4e5e-9f3e-2f1a1b1c1d1e", number: String(10000 + i), logged: false,
      extension: null, context: null, paused: false, paused_reason: null, state_interface: null,
    }));
    const body = JSON.stringify(agents);
    fleet = createHttpServer((req, res) =>
      req.url?.includes("/by-number/")
        ? res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "no such agent" }))
        : res.writeHead(200, { "content-type": "application/json" }).end(body),
    );
    await new Promise<void>((resolve) => fleet.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(fleet.address() as AddressInfo).port}${BASE_PATH}`;
  });
  afterAll(async () => {
    fleet.closeAllConnections();
    await new Promise<void>((resolve) => fleet.close(() => resolve()));
  });

  it("a reader that stops early ends it quietly, with 0, under set -o pipefail", async () => {
    for (const format of ["--json", ""]) {
      const script = `set -o pipefail; "$0" "$1" ${format} agents list | head -c 1 > /dev/null`;
      const piped = await run("bash", ["-c", script, process.execPath, agentctlBin], { env: { PATH: process.env.PATH, AGENTD_URL: url, AGENTD_TOKEN: "t" } });
      expect({ code: piped.code, stderr: piped.stderr }, format).toEqual({ code: 0, stderr: "" });
    }
  });

  // Found by review: the first version exited 0 on any closed pipe, hiding an API error.
  it("a reader that stops early leaves an API error's exit 1 as it is", async () => {
    const script = `set -o pipefail; "$0" "$1" --json agents get --number 9999 | true`;
    const piped = await run("bash", ["-c", script, process.execPath, agentctlBin], { env: { PATH: process.env.PATH, AGENTD_URL: url, AGENTD_TOKEN: "t" } });
    expect(piped.code).toBe(1);
    expect(piped.stderr).toBe("error: 404 no such agent\n");
  });

  it("a full disk is one error line and exit 1", async () => {
    const full = await run("bash", ["-c", `"$0" "$1" agents list > /dev/full`, process.execPath, agentctlBin], { env: { PATH: process.env.PATH, AGENTD_URL: url, AGENTD_TOKEN: "t" } });
    expect(full.code).toBe(1);
    expect(full.stderr).toMatch(/^error: cannot write the output: ENOSPC[^\n]*\n$/);
  });
});

describe("network errors exit 1", () => {
  // Found by a scripting walk: a server that accepts and never answers held agentctl for minutes.
  it("a server that never answers: exit 1 once --timeout (AGENTD_TIMEOUT) has passed, saying so", async () => {
    const silent = createHttpServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}${BASE_PATH}`;
      for (const [args, env] of [[["--timeout", "0.5"], {}], [[], { AGENTD_TIMEOUT: "0.5" }]] as [string[], Record<string, string>][]) {
        const run = await runAgentctl([...args, "agents", "pause", "1001"], { AGENTD_URL: url, AGENTD_TOKEN: "t", ...env });
        expect(run.code).toBe(1);
        expect(run.stderr).toBe(`error: no answer from ${url} within 0.5 s (--timeout, AGENTD_TIMEOUT)\n`);
      }
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it("an unreachable URL names the URL and the cause", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}${BASE_PATH}`;
    const run = await runAgentctl(["agents", "list"], { AGENTD_URL: url, AGENTD_TOKEN: "t" });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`error: cannot reach ${url}/agents: connect ECONNREFUSED 127.0.0.1:${port}\n`);
  });

  it("the default URL is https://localhost:9493/1.0, also when AGENTD_URL is empty", async () => {
    for (const env of [{ AGENTD_TOKEN: "t" }, { AGENTD_TOKEN: "t", AGENTD_URL: "" }] as Record<string, string>[]) {
      const run = await runAgentctl(["agents", "list"], env);
      // Whatever answers there (nothing, or a server with a self-signed
      // certificate), the message names the default URL.
      expect(run.stderr).toContain("https://localhost:9493/1.0/agents");
    }
  });

  it("an https:// URL to a plain HTTP port names OpenSSL's error on one line", async () => {
    const plain = createHttpServer((_req, res) => res.end());
    await new Promise<void>((resolve) => plain.listen(0, "127.0.0.1", resolve));
    try {
      const url = `https://127.0.0.1:${(plain.address() as AddressInfo).port}${BASE_PATH}`;
      const run = await runAgentctl(["agents", "list"], { AGENTD_URL: url, AGENTD_TOKEN: "t" });
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(new RegExp(`^error: cannot reach ${escapeRegExp(url)}/agents: ERR_SSL_WRONG_VERSION_NUMBER .*wrong version number[^\\n]*\n$`));
      // OpenSSL's message ends with a line break, once shown escaped.
      expect(run.stderr).not.toContain("\\u000a");
    } finally {
      plain.closeAllConnections();
      await new Promise<void>((resolve) => plain.close(() => resolve()));
    }
  });
});

// The same CLI against the real server, started in this process: HTTPS with
// its self-signed certificate (trusted with --cacert), a fresh PGlite data
// directory loaded with the suite's agents (SUITE_AGENTS: 1001 logged in,
// 1002 logged out, 1003 paused with a reason, 1004 paused without one, 1005
// logged in, 1006 logged out), and real tokens.
describe("against the real server", () => {
  const server = useTestServer({ agents: suiteAgents() });
  /** --url, --token and --cacert for the real server, as options (not env). */
  let options: string[];

  beforeAll(() => {
    options = ["--url", server.url, "--token", ADMIN_TOKEN, "--cacert", server.running.certPath];
  });

  const getJson = async (number: string): Promise<unknown> => {
    const run = await runAgentctl([...options, "agents", "get", "--number", number, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    return expectValid(contract.responseValidator("getAgentByNumber", 200), parseJson(run));
  };

  it("agents list prints every agent as a table row, in every state", async () => {
    const run = await runAgentctl([...options, "agents", "list"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const rows = run.stdout.trimEnd().split("\n").map((line) => line.split(/\s{2,}/));
    expect(rows).toEqual([
      ["ID", "NUMBER", "LOGGED", "PAUSED", "REASON", "EXTENSION", "CONTEXT", "INTERFACE"],
      ["1", "1001", "yes", "no", "-", "1001", "default", "PJSIP/agent1"],
      ["2", "1002", "no", "no", "-", "-", "-", "-"],
      ["3", "1003", "yes", "yes", "lunch break", "1003", "default", "PJSIP/agent3"],
      ["4", "1004", "yes", "yes", "-", "1004", "default", "PJSIP/agent4"],
      ["5", "1005", "yes", "no", "-", "1005", "default", "PJSIP/agent5"],
      ["6", "1006", "no", "no", "-", "-", "-", "-"],
    ]);
  });

  it("agents list --json prints exactly what the server answers", async () => {
    const run = await runAgentctl([...options, "agents", "list", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const list = expectValid(contract.responseValidator("listAgents", 200), parseJson(run));
    expect(list).toEqual((await server.call("GET", "/agents")).json);
  });

  it("takes the URL, token and CA file from AGENTD_URL, AGENTD_TOKEN and AGENTD_CACERT", async () => {
    const run = await runAgentctl(["agents", "list", "--json"], {
      AGENTD_URL: server.url,
      AGENTD_TOKEN: ADMIN_TOKEN,
      AGENTD_CACERT: server.running.certPath,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(parseJson(run)).toHaveLength(suiteAgents().length);
  });

  it("agents get --id prints the agent as key/value lines, --number --json as the contract's body", async () => {
    const run = await runAgentctl([...options, "agents", "get", "--id", "3"]);
    expect(run.code, run.stderr).toBe(0);
    const lines = Object.fromEntries(run.stdout.trimEnd().split("\n").map((line) => line.split(/:\s+/) as [string, string]));
    expect(lines).toMatchObject({ id: "3", number: "1003", logged: "true", paused: "true", paused_reason: "lunch break", state_interface: "PJSIP/agent3" });
    expect(await getJson("1003")).toEqual((await server.call("GET", "/agents/by-id/3")).json);
  });

  it("agents pause pauses, and the pause shows on the next get (table and --json)", async () => {
    let run = await runAgentctl([...options, "agents", "pause", "1005", "--reason", "coffee break"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe("agent 1005 paused (reason: coffee break)\n");
    expect(await getJson("1005")).toMatchObject({ logged: true, paused: true, paused_reason: "coffee break" });

    run = await runAgentctl([...options, "agents", "pause", "1005", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(parseJson(run)).toEqual({ number: "1005", paused: true, paused_reason: null });
    expect(await getJson("1005")).toMatchObject({ paused: true, paused_reason: null });

    run = await runAgentctl([...options, "agents", "get", "--number", "1005"]);
    expect(run.stdout).toMatch(/^paused:\s+true$/m);
    expect(run.stdout).toMatch(/^paused_reason:\s+-$/m);
  });

  it("agents unpause ends a pause, the change shows on the next get, and a second unpause still succeeds", async () => {
    expect(await getJson("1003")).toMatchObject({ paused: true, paused_reason: "lunch break" });
    let run = await runAgentctl([...options, "agents", "unpause", "1003"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe("agent 1003 unpaused\n");
    expect(await getJson("1003")).toMatchObject({ logged: true, paused: false, paused_reason: null });

    run = await runAgentctl([...options, "agents", "unpause", "1003", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(parseJson(run)).toEqual({ number: "1003", paused: false, paused_reason: null });
    expect(await getJson("1003")).toMatchObject({ paused: false, paused_reason: null });
  });

  it("agents unpause exits 1 with the status and the contract's error: 404, 409, 403", async () => {
    let run = await runAgentctl([...options, "agents", "unpause", "999999"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe("error: 404 no such agent\n");
    run = await runAgentctl([...options, "agents", "unpause", "1002", "--json"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe("error: 409 not logged in\n");
    expect(parseJson(run)).toEqual({ status: 409, error: "not logged in" });
    const pauser = await server.createToken(["agentd.agents.by-number.*.pause.create"]);
    expect(await getJson("1004")).toMatchObject({ paused: true });
    run = await runAgentctl(["--url", server.url, "--token", pauser, "--cacert", server.running.certPath, "agents", "unpause", "1004"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe("error: 403 insufficient permissions\n");
    expect(await getJson("1004")).toMatchObject({ paused: true });
  });

  it("API errors exit 1 with the status and the contract's error: 404, 409, 400", async () => {
    let run = await runAgentctl([...options, "agents", "get", "--number", "999999"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe("error: 404 no such agent\n");
    expect(run.stdout).toBe("");

    run = await runAgentctl([...options, "agents", "pause", "1002", "--reason", "lunch"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe("error: 409 not logged in\n");
    expect(await getJson("1002")).toMatchObject({ logged: false, paused: false });

    run = await runAgentctl([...options, "agents", "pause", "1001", "--reason", "x".repeat(81), "--json"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: 400 invalid request\n {2}body /);
    expect(parseJson(run)).toMatchObject({ status: 400, error: "invalid request" });
  });

  it("a URL without the API's base path exits 1 with 404 not found, and says what to check", async () => {
    const root = new URL(server.url).origin;
    const run = await runAgentctl(["--url", root, "--token", ADMIN_TOKEN, "--cacert", server.running.certPath, "agents", "list"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`error: 404 not found\n  no such path under ${root}: does the URL end with the API's base path (…/1.0)?\n`);
  });

  it("a bad token exits 1 with 401 invalid token or unauthorized", async () => {
    const run = await runAgentctl(["--url", server.url, "--token", "not-a-token", "--cacert", server.running.certPath, "agents", "list"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe("error: 401 invalid token or unauthorized\n");
    expect(run.stdout).toBe("");
    const json = await runAgentctl(["--url", server.url, "--token", "not-a-token", "--cacert", server.running.certPath, "agents", "list", "--json"]);
    expect(json.code).toBe(1);
    expect(parseJson(json)).toEqual({ status: 401, error: "invalid token or unauthorized" });
  });

  it("a token without the ACL exits 1 with 403 insufficient permissions, and pauses nothing", async () => {
    const reader = await server.createToken(["agentd.agents.read", "agentd.agents.by-number.*.read"]);
    const run = await runAgentctl(["--url", server.url, "--token", reader, "--cacert", server.running.certPath, "agents", "pause", "1001"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe("error: 403 insufficient permissions\n");
    expect(await getJson("1001")).toMatchObject({ paused: false });
  });

  it("a usage error exits 2, with the message on stderr", async () => {
    for (const args of [["agents", "get"], ["agents", "get", "--id", "0"], ["agents", "pause"], ["agents", "stop", "1001"]]) {
      const run = await runAgentctl([...options, ...args]);
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr).toMatch(/error/);
    }
  });

  it("an unreachable URL exits 1 with a message naming the URL and the cause", async () => {
    const port = await freePort(); // released: nothing listens there
    const url = `https://127.0.0.1:${port}${BASE_PATH}`;
    const run = await runAgentctl(["--url", url, "--token", ADMIN_TOKEN, "--cacert", server.running.certPath, "agents", "list"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`error: cannot reach ${url}/agents: connect ECONNREFUSED 127.0.0.1:${port}\n`);
  });

  it("without --cacert the self-signed certificate is refused: exit 1, the message names the certificate problem", async () => {
    const run = await runAgentctl(["--url", server.url, "--token", ADMIN_TOKEN, "agents", "list"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(`error: cannot reach ${server.url}/agents: `);
    expect(run.stderr).toMatch(/DEPTH_ZERO_SELF_SIGNED_CERT|self[- ]signed certificate/);
    expect(run.stderr).toContain("\n  the server's certificate is not trusted: pass it (or its CA's) with --cacert or AGENTD_CACERT");
  });

  it("with a --cacert that is another server's certificate: the hint says the file given is the wrong one", async () => {
    const other = await mkdtemp(path.join(tmpdir(), "agentctl-other-ca-"));
    try {
      const { certPath } = await loadOrCreateCertificate({ dataDir: other });
      const run = await runAgentctl(["--url", server.url, "--token", ADMIN_TOKEN, "--cacert", certPath, "agents", "list"]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain("\n  the server's certificate is not trusted by the --cacert (or AGENTD_CACERT) file given: it must be that server's own certificate, or its CA's");
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });

  it("an http:// URL to the HTTPS port exits 1 and says the service speaks HTTPS only", async () => {
    const run = await runAgentctl(["--url", server.url.replace(/^https:/, "http:"), "--token", ADMIN_TOKEN, "agents", "list"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: cannot reach http:\/\/.*\n {2}the connection was closed without an answer: the service speaks HTTPS only, so its URL starts with https:\/\/\n$/);
  });
});
