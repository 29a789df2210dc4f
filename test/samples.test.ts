// The code samples of the docs (samples/, put into x-codeSamples by the
// agentd/code-samples decorator), each run as a reader would run it against
// a real server, with its effect checked: curl under bash, TypeScript with
// tsx (the type checker checks it in npm run check), Python under Debian's
// python3 with python3-requests (.ci/run installs it). The receivers get a
// real signed delivery from the server, and refuse a tampered or stale one.
import { packageVersion } from "../server/package-root.js";
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { envWithoutAgentd } from "../devkit/child-env.js";
import { freePort } from "../devkit/ports.js";
import { repoRoot } from "../devkit/root.js";
import { run } from "../devkit/run.js";
import { LANGUAGES, RECEIVERS } from "../plugins/code-samples.js";
import type { AgentRecord, AgentStatus } from "../server/store/agent-store.js";
import { loadContract } from "./helpers/contract.js";
import { copyProject, type ProjectCopy } from "./helpers/project-copy.js";
import { ADMIN_TOKEN, startTestServer, type TestServer } from "./helpers/server.js";
import { startWebhookReceiver, type WebhookReceiver } from "./helpers/webhook-receiver.js";

const contract = loadContract();
const EXAMPLE_AGENTS: AgentRecord[] = (contract.document.components.examples.AgentList.value as AgentStatus[]).map(({ origin_uuid: _, ...agent }) => agent);
// Without its base64 padding (32 bytes leave one "="), which agentd takes, so the receivers must too.
const SECRET = `whsec_${Buffer.alloc(32, 42).toString("base64").replace(/=+$/, "")}`;
const PYTHON = "/usr/bin/python3";
const samplesDir = path.join(repoRoot, "samples");

/** How each language's sample is run, as its reader runs it. */
const RUNNERS: Record<string, (file: string) => [string, string[]]> = {
  curl: (file) => ["bash", [file]],
  TypeScript: (file) => [process.execPath, ["--import", "tsx", file]],
  Python: (file) => [PYTHON, [file]],
};

const fileOf = (lang: string, operationId: string): string => {
  const language = LANGUAGES.find((l) => l.lang === lang)!;
  return path.join(samplesDir, language.dir, `${operationId}.${language.ext}`);
};

interface RunningReceiver {
  lang: string;
  url: string;
  output(): string;
  stop(): void;
}

async function startReceiver(lang: string, file: string): Promise<RunningReceiver> {
  const port = await freePort();
  const [command, args] = RUNNERS[lang]!(path.join(samplesDir, file));
  const child: ChildProcess = spawn(command, args, { cwd: repoRoot, env: { ...envWithoutAgentd(), PORT: String(port), AGENTD_WEBHOOK_SECRET: SECRET }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const receiver = { lang, url: `http://127.0.0.1:${port}/`, output: () => output, stop: () => void child.kill("SIGKILL") };
  try {
    await vi.waitFor(() => expect(output, `${file} listening`).toContain(`listening on ${port}`), { timeout: 30_000, interval: 100 });
  } catch (err) {
    receiver.stop();
    throw err;
  }
  return receiver;
}

let server: TestServer;
let recorder: WebhookReceiver;
const receivers: RunningReceiver[] = [];

beforeAll(async () => {
  readerProject = await mkdtemp(path.join(tmpdir(), "agentd-reader-"));
  await writeFile(path.join(readerProject, "package.json"), JSON.stringify({ name: "reader", version: "1.0.0", type: "commonjs" }));
  await mkdir(path.join(readerProject, "node_modules"));
  await symlink(repoRoot, path.join(readerProject, "node_modules", "agentd"), "dir");
  // Fails, never skips, where Debian's python3 lacks requests: .ci/run installs python3-requests.
  const python = await run(PYTHON, ["-c", "import requests"]);
  if (python.code !== 0) throw new Error(`${PYTHON} cannot import requests (apt-get install python3-requests; .ci/run does): ${python.stderr}`);
  recorder = await startWebhookReceiver();
  for (const { lang, file } of RECEIVERS) receivers.push(await startReceiver(lang, file));
  server = await startTestServer(
    { AGENTD_WEBHOOK_URLS: [...receivers.map((r) => r.url), recorder.url].join(","), AGENTD_WEBHOOK_SECRET: SECRET, AGENTD_EVENT_POLL_INTERVAL: "50ms" },
    EXAMPLE_AGENTS,
  );
}, 120_000);

afterAll(async () => {
  if (readerProject !== undefined) await rm(readerProject, { recursive: true, force: true });
  for (const receiver of receivers) receiver.stop();
  await server?.close();
  await recorder?.close();
});

/**
 * A reader's own project for the TypeScript samples, as the docs describe it:
 * `npm init -y` (npm 11 writes `"type": "commonjs"`), the package installed
 * (here a link to this clone), each sample saved as a `.mts` file and run
 * with tsx's command.
 */
let readerProject: string;

/** How a sample of `lang` is run as its reader runs it, from `cwd`. */
async function readerCommand(lang: string, operationId: string): Promise<{ command: string; args: string[]; cwd: string }> {
  if (lang !== "TypeScript") {
    const [command, args] = RUNNERS[lang]!(fileOf(lang, operationId));
    return { command, args, cwd: repoRoot };
  }
  const saved = path.join(readerProject, `${operationId}.mts`);
  await copyFile(fileOf(lang, operationId), saved);
  return { command: process.execPath, args: [path.join(repoRoot, "node_modules", "tsx", "dist", "cli.mjs"), saved], cwd: readerProject };
}

/** Runs one sample with the three settings every sample reads; fails on a non-zero exit. */
async function runSample(lang: string, operationId: string): Promise<string> {
  const { command, args, cwd } = await readerCommand(lang, operationId);
  const result = await run(command, args, {
    cwd,
    env: { ...envWithoutAgentd(), AGENTD_URL: server.url, AGENTD_TOKEN: ADMIN_TOKEN, AGENTD_CACERT: server.running.certPath },
    timeoutMs: 60_000,
  });
  expect(result.code, `${lang} ${operationId}:\n${result.stdout}${result.stderr}`).toBe(0);
  return result.stdout;
}

const agent = async (number: string): Promise<AgentStatus> => (await server.call("GET", `/agents/by-number/${number}`)).json as AgentStatus;

// A reader pastes the curl samples into their own shell: bash, zsh (macOS's
// default, which does not split an unquoted expansion into words) or a plain
// sh. Each must hand curl the same arguments there, with a CA path that has a
// space in it and without one. .ci/run installs zsh; without it this fails.
describe("the curl samples in bash, zsh and sh", () => {
  const argv = async (shell: string, operationId: string, cacert: string | undefined): Promise<string[]> => {
    const result = await run(shell, ["-c", 'curl() { printf "%s\\n" "$@"; }; . "$1"', shell, fileOf("curl", operationId)], {
      cwd: repoRoot,
      env: { ...envWithoutAgentd(), AGENTD_URL: "https://agentd.example:9493/1.0", AGENTD_TOKEN: "t0ken", ...(cacert === undefined ? {} : { AGENTD_CACERT: cacert }) },
    });
    expect(result.code, `${shell} ${operationId}: ${result.stderr}`).toBe(0);
    return result.stdout.split("\n").slice(0, -1);
  };

  const curlSamples = readdirSync(path.join(samplesDir, "curl")).map((file) => file.replace(/\.sh$/, ""));

  it("has curl samples to check", () => {
    expect(curlSamples.length).toBeGreaterThan(0);
  });

  // Pasted, not run as a script: an interactive zsh (macOS's, without the
  // interactivecomments option) takes a line starting with # for a command.
  it.each(curlSamples)("%s pasted into an interactive zsh runs curl alone, with no error", async (operationId) => {
    const pasted = `curl() { print -r -- curl-called; }\n${await readFile(fileOf("curl", operationId), "utf8")}`;
    const result = await run("zsh", ["-f", "-i"], { cwd: repoRoot, env: { ...envWithoutAgentd(), AGENTD_URL: "https://agentd.example:9493/1.0", AGENTD_TOKEN: "t0ken" }, input: pasted });
    const output = result.stdout + result.stderr;
    expect(output).toContain("curl-called");
    expect(output).not.toMatch(/zsh: /);
  });

  it.each(curlSamples)("%s hands curl the same arguments in each", async (operationId) => {
    for (const cacert of ["/etc/agentd/my ca.pem", undefined]) {
      const bash = await argv("bash", operationId, cacert);
      expect(bash.includes("--cacert"), String(cacert)).toBe(cacert !== undefined);
      if (cacert !== undefined) expect(bash[bash.indexOf("--cacert") + 1]).toBe(cacert);
      expect(await argv("zsh", operationId, cacert), `zsh, ${String(cacert)}`).toEqual(bash);
      expect(await argv("sh", operationId, cacert), `sh, ${String(cacert)}`).toEqual(bash);
    }
  });
});

describe.each(LANGUAGES.map(({ lang }) => lang))("the %s samples, run against a real server", (lang) => {
  it("listAgents prints the agents the server holds", async () => {
    const output = await runSample(lang, "listAgents");
    const held = (await server.call("GET", "/agents")).json as AgentStatus[];
    if (lang === "curl") expect(JSON.parse(output)).toEqual(held);
    else for (const { number } of held) expect(output).toMatch(new RegExp(`^${number} (available|paused|logged out)$`, "m"));
  });

  it("getAgentById prints agent 1", async () => {
    const output = await runSample(lang, "getAgentById");
    const held = ((await server.call("GET", "/agents/by-id/1")).json) as AgentStatus;
    if (lang === "Python") expect(output).toContain(`'id': 1, 'origin_uuid': '${held.origin_uuid}', 'number': '1001'`);
    else expect(JSON.parse(output)).toEqual(held);
  });

  it("getAgentByNumber prints agent 1001", async () => {
    const output = await runSample(lang, "getAgentByNumber");
    if (lang === "Python") expect(output).toContain("'number': '1001'");
    else expect(JSON.parse(output)).toEqual(await agent("1001"));
  });

  // Python's GETs used raise_for_status(), which says "401 Client Error"
  // and drops the contract's error identifier.
  it.each(["listAgents", "getAgentById", "getAgentByNumber"])("%s, with a token the server refuses, fails and says the contract's error identifier", async (operationId) => {
    const { command, args, cwd } = await readerCommand(lang, operationId);
    const result = await run(command, args, {
      cwd,
      env: { ...envWithoutAgentd(), AGENTD_URL: server.url, AGENTD_TOKEN: "not-a-token", AGENTD_CACERT: server.running.certPath },
      timeoutMs: 60_000,
    });
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain("invalid token or unauthorized");
  });

  it("pauseAgentByNumber pauses agent 1001 with its reason", async () => {
    expect((await server.call("POST", "/agents/by-number/1001/unpause")).status).toBe(204);
    // curl puts the status on a line of its own, after the body an error has.
    expect(await runSample(lang, "pauseAgentByNumber")).toBe(lang === "curl" ? "\n204\n" : "204\n");
    expect(await agent("1001")).toMatchObject({ paused: true, paused_reason: "lunch break" });
  });

  it("unpauseAgentByNumber ends the pause of agent 1001, the one the pause sample paused", async () => {
    expect((await server.call("POST", "/agents/by-number/1001/pause", { body: { reason: "before the sample" } })).status).toBe(204);
    expect(await runSample(lang, "unpauseAgentByNumber")).toBe(lang === "curl" ? "\n204\n" : "204\n");
    expect(await agent("1001")).toMatchObject({ paused: false, paused_reason: null });
  });
});

describe("the webhook receivers", () => {
  /** Posts a delivery to a receiver; resolves with its status. */
  const deliver = async (receiver: RunningReceiver, headers: Record<string, string>, body: string): Promise<number> =>
    (await fetch(receiver.url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body })).status;

  it("accept the server's signed deliveries, refuse a tampered or stale one, and recognise a repeated webhook-id", async () => {
    recorder.received.length = 0;
    expect((await server.call("POST", "/agents/by-number/1002/pause", { body: {} })).status).toBe(409); // logged out: no event
    expect((await server.call("POST", "/agents/by-number/1001/pause", { body: { reason: "for the receivers" } })).status).toBe(204);
    await vi.waitFor(() => expect(recorder.received.find((d) => d.body.includes("for the receivers"))).toBeDefined(), { timeout: 15_000 });
    const delivery = recorder.received.find((d) => d.body.includes("for the receivers"))!;
    const id = delivery.headers["webhook-id"] as string;
    // Found by an events integrator: no User-Agent, which some firewalls refuse.
    expect(delivery.headers["user-agent"]).toBe(`agentd/${packageVersion()}`);
    for (const receiver of receivers) {
      // The server's own delivery to this receiver, handled and printed once.
      await vi.waitFor(() => expect(receiver.output(), receiver.lang).toContain(`agent_paused 1001 "for the receivers" ${id}`), { timeout: 15_000 });
      const signed = { "webhook-id": id, "webhook-timestamp": delivery.headers["webhook-timestamp"] as string, "webhook-signature": delivery.headers["webhook-signature"] as string };
      expect(await deliver(receiver, signed, delivery.body.replace("for the receivers", "for the attacker")), `${receiver.lang}: tampered body`).toBe(401);
      expect(await deliver(receiver, { ...signed, "webhook-signature": "v1,AAAA" }, delivery.body), `${receiver.lang}: bad signature`).toBe(401);
      // Found by an events integrator: Python's compare_digest raised on a non-ASCII str, and no answer came.
      expect(await deliver(receiver, { ...signed, "webhook-signature": "v1,\u00e9" }, delivery.body), `${receiver.lang}: non-ASCII signature`).toBe(401);
      const stale = new Date(Date.now() - 10 * 60_000);
      const staleHeaders = { "webhook-id": id, "webhook-timestamp": String(Math.floor(stale.getTime() / 1000)), "webhook-signature": new Webhook(SECRET).sign(id, stale, delivery.body) };
      expect(await deliver(receiver, staleHeaders, delivery.body), `${receiver.lang}: stale timestamp`).toBe(401);
      // The recorder's copy is a genuine delivery of the same event: a retry, as the receiver sees it.
      expect(await deliver(receiver, signed, delivery.body), `${receiver.lang}: repeated delivery`).toBe(204);
      // Its output comes through a pipe, after the answer.
      await vi.waitFor(() => expect(receiver.output(), receiver.lang).toContain(`repeat ${id}`), { timeout: 5_000 });
      expect(receiver.output().split(`agent_paused 1001 "for the receivers"`).length - 1, `${receiver.lang} handled the event once`).toBe(1);
      // On every interface, as the README says: a receiver URL may resolve to IPv6.
      expect(await deliver({ ...receiver, url: receiver.url.replace("127.0.0.1", "[::1]") }, signed, delivery.body), `${receiver.lang}: over IPv6`).toBe(204);
    }
  });
});

describe("the samples in the contract", () => {
  let copy: ProjectCopy | undefined;
  afterAll(async () => {
    await copy?.remove();
  });

  it("come from their files: the current page's bundle carries each file as it is", async () => {
    const output = path.join(repoRoot, "artifacts", `samples-bundle-${process.pid}.json`);
    const bundle = await run(path.join(repoRoot, "node_modules", ".bin", "redocly"), ["bundle", "main", "--ext", "json", "-o", output], { cwd: repoRoot, env: { ...process.env, REDOCLY_TELEMETRY: "off" } });
    expect(bundle.code, bundle.stdout + bundle.stderr).toBe(0);
    const document = JSON.parse(await readFile(output, "utf8"));
    await rm(output, { force: true });
    for (const { operationId, method, path: template } of contract.operations()) {
      const samples = document.paths[template][method]["x-codeSamples"] as { lang: string; source: string }[];
      expect(samples.map((s) => s.lang), operationId).toEqual(LANGUAGES.map((l) => l.lang));
      for (const sample of samples) expect(sample.source, `${operationId} ${sample.lang}`).toBe((await readFile(fileOf(sample.lang, operationId), "utf8")).trimEnd());
    }
    for (const name of Object.keys(contract.document.webhooks)) {
      const samples = document.webhooks[name].post["x-codeSamples"] as { label: string; source: string }[];
      expect(samples.map((s) => s.label)).toEqual(RECEIVERS.map((r) => r.label));
      for (const [i, sample] of samples.entries()) expect(sample.source).toBe((await readFile(path.join(samplesDir, RECEIVERS[i]!.file), "utf8")).trimEnd());
    }
  });

  it("a stale sample fails the checks and the docs build: one that calls a path the contract does not have", async () => {
    copy = await copyProject();
    const file = path.join(copy.dir, "samples", "python", "getAgentByNumber.py");
    await writeFile(file, (await readFile(file, "utf8")).replace("/agents/by-number/1001", "/agents/by-extension/1001"));
    const check = await copy.run("samples-check");
    expect(check.code).toBe(1);
    expect(check.stderr).toContain("samples/python/getAgentByNumber.py sends GET /agents/by-extension/1001, not its operation's GET /agents/by-number/{agent_number}");
    const docs = await run(path.join(repoRoot, "node_modules", ".bin", "redocly"), ["bundle", "main", "-o", path.join(copy.dir, "bundle.yaml")], { cwd: copy.dir, env: { ...process.env, REDOCLY_TELEMETRY: "off" } });
    expect(docs.code).not.toBe(0);
    expect(docs.stdout + docs.stderr).toContain("samples/python/getAgentByNumber.py");
  });
});
