// The contract's own guarantees: the invariants the server, client and docs
// rely on, and lint rules and a generate check that catch a broken contract.
// Each invariant is a function returning its problems; the last block feeds
// each one a deliberately broken copy of the contract, so every check is
// shown to be able to fail. Lint, type check, generate:check and the gate of
// the repository itself are `npm run check`, which .ci/run runs once beside
// the tests.
import { existsSync, readFileSync } from "node:fs";
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dump, load } from "js-yaml";
import { repoRoot } from "../devkit/root.js";
import { frozenFile, listedReleases } from "../scripts/lib/project.js";
import { run, type RunResult } from "../devkit/run.js";
import { contractFrom, escape, loadContract, lookup } from "./helpers/contract.js";
import type { Contract, OpenApiDocument } from "./helpers/contract.js";

const bin = (name: string): string => path.join(repoRoot, "node_modules", ".bin", name);

const exec = (file: string, args: string[], cwd = repoRoot): Promise<RunResult> => run(file, args, { cwd, env: { ...process.env, NO_COLOR: "1" } });

interface LintTotals {
  errors: number;
  warnings: number;
  problems: { ruleId: string; severity: string; message: string }[];
}

/**
 * Runs one `redocly lint` over `files` in `cwd` (so that directory's
 * redocly.yaml applies). Its JSON output is one report per file, in order,
 * written back to back; the exit code is for all of them.
 */
async function lint(cwd: string, files: string[]): Promise<(LintTotals & { code: number })[]> {
  const outcome = await exec(bin("redocly"), ["lint", ...files, "--format", "json"], cwd);
  const start = outcome.stdout.indexOf("{");
  if (start < 0) throw new Error(`no JSON report from redocly lint:\n${outcome.stdout}\n${outcome.stderr}`);
  const reports = JSON.parse(`[${outcome.stdout.slice(start).replace(/^\}\{$/gm, "},{")}]`) as { totals: { errors: number; warnings: number }; problems: LintTotals["problems"] }[];
  if (reports.length !== files.length) throw new Error(`redocly lint gave ${reports.length} reports for ${files.length} files:\n${outcome.stdout}`);
  return reports.map((report) => ({ code: outcome.code, ...report.totals, problems: report.problems }));
}

const scratch: string[] = [];
async function scratchDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "agentd-contract-"));
  scratch.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(scratch.map((dir) => rm(dir, { recursive: true, force: true })));
});

// ---------------------------------------------------------------------------
// Invariants, each `(contract) => problems`.

const EXPECTED_OPERATIONS = [
  { operationId: "listAgents", method: "get", path: "/agents" },
  { operationId: "getAgentById", method: "get", path: "/agents/by-id/{agent_id}" },
  { operationId: "getAgentByNumber", method: "get", path: "/agents/by-number/{agent_number}" },
  { operationId: "pauseAgentByNumber", method: "post", path: "/agents/by-number/{agent_number}/pause" },
  { operationId: "unpauseAgentByNumber", method: "post", path: "/agents/by-number/{agent_number}/unpause" },
];

const AGENT_STATUS_FIELDS = [
  "id",
  "origin_uuid",
  "number",
  "extension",
  "context",
  "logged",
  "paused",
  "paused_reason",
  "state_interface",
];

function checkOperations(c: Contract): string[] {
  const problems: string[] = [];
  const actual = c.operations().map(({ operationId, method, path }) => ({ operationId, method, path }));
  if (JSON.stringify(actual) !== JSON.stringify(EXPECTED_OPERATIONS)) {
    problems.push(`operations are ${JSON.stringify(actual)}, expected ${JSON.stringify(EXPECTED_OPERATIONS)}`);
  }
  const definedTags = new Set((c.document.tags ?? []).map((t: { name: string }) => t.name));
  // Summary case, operationId case and the ACL's presence and shape are lint rules (redocly.yaml).
  for (const { operationId, operation } of c.operations()) {
    if (typeof operation.description !== "string" || !/^[A-Z][\s\S]*\.\s*$/.test(operation.description)) {
      problems.push(`${operationId}: description missing or not a sentence`);
    }
    const tags: unknown = operation.tags;
    if (!Array.isArray(tags) || tags.length === 0) problems.push(`${operationId}: no tags`);
    else for (const tag of tags) if (!definedTags.has(tag)) problems.push(`${operationId}: tag ${String(tag)} not defined`);
  }
  return problems;
}

function checkAcls(c: Contract): string[] {
  const problems: string[] = [];
  for (const { operationId, path: route, operation } of c.operations()) {
    const acl: unknown = operation["x-required-acl"];
    if (typeof acl !== "string") continue; // the lint rule rule/operation-required-acl reports it
    const placeholders = [...acl.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
    const templateParams = [...route.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
    const declaredParams = (operation.parameters ?? [])
      .map((p: unknown) => c.resolve<{ name: string; in: string }>(p))
      .filter((p: { in: string }) => p.in === "path")
      .map((p: { name: string }) => p.name)
      .sort();
    if (JSON.stringify(placeholders) !== JSON.stringify(templateParams)) {
      problems.push(`${operationId}: ACL placeholders ${placeholders.join(",")} are not the path parameters ${templateParams.join(",")}`);
    }
    if (JSON.stringify(declaredParams) !== JSON.stringify(templateParams)) {
      problems.push(`${operationId}: declared path parameters ${declaredParams.join(",")} differ from the path ${route}`);
    }
    if (typeof operation.description !== "string" || !operation.description.includes(acl)) {
      problems.push(`${operationId}: description does not name the ACL ${acl}`);
    }
  }
  return problems;
}

function checkSecurity(c: Contract): string[] {
  const problems: string[] = [];
  const doc = c.document;
  if (JSON.stringify(doc.security) !== JSON.stringify([{ token: [] }])) {
    problems.push(`global security is ${JSON.stringify(doc.security)}, expected [{"token":[]}]`);
  }
  const schemes = doc.components?.securitySchemes ?? {};
  if (JSON.stringify(Object.keys(schemes)) !== JSON.stringify(["token"])) {
    problems.push(`security schemes are ${Object.keys(schemes).join(",")}, expected only token`);
  }
  const token = schemes.token ?? {};
  if (token.type !== "apiKey" || token.in !== "header" || token.name !== "X-Auth-Token") {
    problems.push(`the token scheme is ${JSON.stringify(token)}, expected an apiKey in header X-Auth-Token`);
  }
  for (const { operationId, operation } of c.operations()) {
    // An operation-level `security` would override (and could empty) the global one.
    if (operation.security !== undefined) problems.push(`${operationId}: overrides the global security`);
  }
  return problems;
}

/** Checks every media type of `owner` (a response or request body): named `$ref` examples that validate. */
function checkMediaExamples(c: Contract, ownerPointer: string, label: string): string[] {
  const problems: string[] = [];
  let pointer = ownerPointer;
  // Follow a response or request body that is itself a `$ref`.
  for (let node = lookup(c.document, pointer); typeof node?.$ref === "string"; node = lookup(c.document, pointer)) {
    pointer = node.$ref;
  }
  const content: Record<string, any> | undefined = lookup(c.document, pointer).content;
  if (content === undefined) return problems;
  for (const [mediaType, media] of Object.entries(content)) {
    const at = `${label} ${mediaType}`;
    if (media.example !== undefined) problems.push(`${at}: inline example instead of named examples`);
    const examples: Record<string, any> = media.examples ?? {};
    if (Object.keys(examples).length === 0) problems.push(`${at}: no named examples`);
    const validate = c.validatorAt(`${pointer}/content/${escape(mediaType)}/schema`);
    for (const [name, example] of Object.entries(examples)) {
      if (typeof example?.$ref !== "string" || !example.$ref.startsWith("#/components/examples/")) {
        problems.push(`${at}: example ${name} is not a $ref to components/examples`);
        continue;
      }
      const value = c.resolve<{ value?: unknown }>(example).value;
      if (value === undefined) problems.push(`${at}: example ${name} has no value`);
      else if (!validate(value)) {
        problems.push(`${at}: example ${name} does not validate: ${JSON.stringify(validate.errors)}`);
      }
    }
  }
  return problems;
}

function checkExamples(c: Contract): string[] {
  const problems: string[] = [];
  for (const { operationId, method, path: route, operation } of c.operations()) {
    const base = `#/paths/${escape(route)}/${method}`;
    for (const status of Object.keys(operation.responses ?? {})) {
      const response = c.resolve<{ content?: unknown }>(operation.responses[status]);
      if (response.content === undefined && status !== "204") {
        problems.push(`${operationId} ${status}: no content, so no example`);
      }
      problems.push(...checkMediaExamples(c, `${base}/responses/${status}`, `${operationId} ${status}`));
    }
    if (operation.requestBody !== undefined) {
      problems.push(...checkMediaExamples(c, `${base}/requestBody`, `${operationId} request body`));
    }
  }
  // The agent examples cover the three states a front end must render.
  const agents = Object.values<{ value: any }>(c.document.components?.examples ?? {})
    .map((e) => e.value)
    .filter((v) => v !== null && typeof v === "object" && !Array.isArray(v) && "logged" in v);
  const covers = (what: string, match: (a: any) => boolean): void => {
    if (!agents.some(match)) problems.push(`no example of ${what}`);
  };
  covers("a logged-in agent", (a) => a.logged === true && a.paused === false);
  covers("a logged-out agent", (a) => a.logged === false);
  covers("a paused agent with a reason", (a) => a.paused === true && typeof a.paused_reason === "string");
  return problems;
}

/**
 * Every error response names the stable identifiers it carries (a `const`, or
 * a `oneOf` of them, beside the shared Error body), and its examples carry
 * one of them: clients branch on `error`, so the gate must see a rename.
 */
function checkErrorIdentifiers(c: Contract): string[] {
  const problems: string[] = [];
  // The shared responses, and any an operation writes out itself for an error status.
  const inline = c
    .operations()
    .flatMap(({ operationId, operation }) =>
      Object.entries<any>(operation.responses ?? {})
        .filter(([status, response]) => Number(status) >= 400 && response.$ref === undefined)
        .map(([status, response]) => [`${operationId} ${status}`, response] as const),
    );
  for (const [name, response] of [...Object.entries<any>(c.document.components?.responses ?? {}), ...inline]) {
    const media = response.content?.["application/json"];
    const parts: unknown[] = media?.schema?.allOf ?? [media?.schema];
    if (!parts.some((part) => isObject(part) && part.$ref === "#/components/schemas/Error")) continue;
    const error = parts.map((part) => (isObject(part) ? (part as any).properties?.error : undefined)).find((e) => e !== undefined);
    const ids: unknown[] = error === undefined ? [] : "const" in error ? [error.const] : (error.oneOf ?? []).map((branch: any) => branch.const);
    if (ids.length === 0 || ids.some((id) => typeof id !== "string")) {
      problems.push(`${name}: the Error body names no identifier (allOf: [Error, {properties: {error: {const: …}}}])`);
      continue;
    }
    for (const [exampleName, example] of Object.entries<any>(media.examples ?? {})) {
      const value = c.resolve<{ value?: { error?: unknown } }>(example).value;
      if (!ids.includes(value?.error)) problems.push(`${name}: example ${exampleName} carries ${JSON.stringify(value?.error)}, not one of ${ids.join(", ")}`);
    }
  }
  return problems;
}

/**
 * Every place a 400 example names is one its operation has: a path
 * parameter of its own, a body only where it takes one. An example shows
 * what the server answers that operation (the stateless mock answers the
 * first), so one naming another operation's parameter misleads.
 */
function checkBadRequestPlaces(c: Contract): string[] {
  const problems: string[] = [];
  for (const { operationId, operation } of c.operations()) {
    if (operation.responses?.["400"] === undefined) continue;
    const parameters = new Set((operation.parameters ?? []).map((parameter: unknown) => c.resolve<{ name: string; in: string }>(parameter)).filter((p: { in: string }) => p.in === "path").map((p: { name: string }) => p.name));
    for (const [name, example] of Object.entries<unknown>(c.responseExamples(operationId, 400))) {
      for (const place of c.resolve<{ value: { details?: { location: string; path: string }[] } }>(example).value.details ?? []) {
        const wrong =
          (place.location === "path" && !parameters.has(place.path)) || (place.location === "body" && operation.requestBody === undefined);
        if (wrong) problems.push(`${operationId} 400 example ${name}: names ${place.location} ${place.path}, which the operation does not have`);
      }
    }
  }
  return problems;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);

function checkAgentStatus(c: Contract): string[] {
  const problems: string[] = [];
  const schema = c.document.components?.schemas?.AgentStatus;
  if (schema === undefined) return ["no AgentStatus schema"];
  const fields = Object.keys(schema.properties ?? {}).sort();
  if (JSON.stringify(fields) !== JSON.stringify([...AGENT_STATUS_FIELDS].sort())) {
    problems.push(`AgentStatus fields are ${fields.join(",")}`);
  }
  if (JSON.stringify([...(schema.required ?? [])].sort()) !== JSON.stringify([...AGENT_STATUS_FIELDS].sort())) {
    problems.push(`AgentStatus requires ${(schema.required ?? []).join(",")}, expected all nine fields`);
  }
  if (schema.additionalProperties !== false) problems.push("AgentStatus allows additional properties");
  for (const [name, property] of Object.entries<any>(schema.properties ?? {})) {
    if (typeof property.description !== "string" || property.description.trim() === "") {
      problems.push(`AgentStatus.${name} has no description`);
    }
  }
  return problems;
}

/** Releases listed in the `| Release | Change |` table of info.description. */
function historyReleases(description: unknown): string[] {
  const lines = (typeof description === "string" ? description : "").split("\n").map((l) => l.trim());
  const header = lines.findIndex((l) => /^\|\s*Release\s*\|\s*Change\s*\|$/.test(l));
  if (header < 0) return [];
  const releases: string[] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith("|")) break;
    const cell = line.split("|")[1]?.trim();
    if (cell !== undefined) releases.push(cell);
  }
  return releases;
}

/** Every `x-since` and `x-until` in the document, with where it is. */
function releaseMarkers(document: unknown): { pointer: string; marker: string; release: unknown }[] {
  const found: { pointer: string; marker: string; release: unknown }[] = [];
  const walk = (node: unknown, pointer: string): void => {
    if (Array.isArray(node)) node.forEach((item, i) => walk(item, `${pointer}/${i}`));
    else if (node !== null && typeof node === "object") {
      for (const [key, value] of Object.entries(node)) {
        if (key === "x-since" || key === "x-until") found.push({ pointer, marker: key, release: value });
        else walk(value, `${pointer}/${escape(key)}`);
      }
    }
  };
  walk(document, "#");
  return found;
}

function checkHistory(c: Contract): string[] {
  const problems: string[] = [];
  // info.x-releases is the one list of releases (its order and form are the
  // lint rule agentd/release-markers); the table must say the same.
  const listed: unknown = c.document.info?.["x-releases"];
  const releases = Array.isArray(listed) ? listed.filter((r): r is string => typeof r === "string") : [];
  if (releases.length === 0) problems.push("info.x-releases lists no release");
  const table = historyReleases(c.document.info?.description);
  if (JSON.stringify(table) !== JSON.stringify(releases)) {
    problems.push(`history table lists ${table.join(",") || "nothing"}, info.x-releases ${releases.join(",")}`);
  }
  const markers = releaseMarkers(c.document);
  // The first release is the baseline: everything unmarked is from it.
  for (const release of releases.slice(1)) {
    if (!markers.some((m) => m.release === release)) problems.push(`release ${release} has no x-since or x-until marker`);
  }
  for (const marker of markers) {
    if (typeof marker.release !== "string" || !releases.includes(marker.release)) {
      problems.push(`${marker.pointer}: ${marker.marker} ${JSON.stringify(marker.release)} is not a release of info.x-releases`);
    }
  }
  // The markers the issue names, where they belong.
  const expected: [string, string, string][] = [
    ["#/components/schemas/AgentStatus/properties/state_interface", "x-since", "15.15"],
    ["#/servers/0", "x-since", "15.18"],
    ["#/servers/2", "x-until", "15.18"],
    ["#/components/securitySchemes/token", "x-since", "15.19"],
    ["#/paths/~1agents~1by-number~1{agent_number}~1pause/post/requestBody", "x-since", "17.05"],
    ["#/components/schemas/PauseRequest/properties/reason", "x-since", "17.05"],
    ["#/components/schemas/AgentStatus/properties/paused", "x-since", "17.05"],
    ["#/components/schemas/AgentStatus/properties/paused_reason", "x-since", "17.05"],
  ];
  for (const [pointer, marker, release] of expected) {
    if (!markers.some((m) => m.pointer === pointer && m.marker === marker && m.release === release)) {
      problems.push(`${pointer} should carry ${marker} ${release}`);
    }
  }
  return problems;
}

const checks = {
  operations: checkOperations,
  acls: checkAcls,
  security: checkSecurity,
  examples: checkExamples,
  errorIdentifiers: checkErrorIdentifiers,
  badRequestPlaces: checkBadRequestPlaces,
  agentStatus: checkAgentStatus,
  history: checkHistory,
};

// ---------------------------------------------------------------------------

describe("contract invariants", () => {
  const contract = loadContract();
  it.each(Object.entries(checks))("%s", (_name, check) => {
    expect(check(contract)).toEqual([]);
  });
});

// The published releases' 400s too: the gate compares their examples'
// shapes, not their words, and a release before 17.05 has no pause body.
describe("the 400 examples of every published release", () => {
  const current = loadContract().document.components.examples;
  it.each(listedReleases())("%s: name only places their operation has, in the words the server answers today", (release) => {
    const frozen = contractFrom(load(readFileSync(frozenFile(release), "utf8")) as OpenApiDocument);
    expect(checkBadRequestPlaces(frozen)).toEqual([]);
    const names = frozen
      .operations()
      .flatMap(({ operationId }) => Object.values<{ $ref: string }>(frozen.responseExamples(operationId, 400)))
      .map((example) => example.$ref.replace("#/components/examples/", ""));
    expect(names.length).toBeGreaterThan(0);
    for (const name of new Set(names)) {
      expect(current[name], `${name}: in ${release}, gone from openapi.yaml`).toBeDefined();
      expect(frozen.document.components.examples[name].value, name).toEqual(current[name].value);
    }
  });
});

// ---------------------------------------------------------------------------
// Each check against a broken copy: it must report a problem.

function broken(mutate: (doc: OpenApiDocument) => void): Contract {
  const doc = structuredClone(loadContract().document);
  mutate(doc);
  return contractFrom(doc);
}

describe("the checks catch a broken contract", () => {
  const mutations: [keyof typeof checks, string, (doc: OpenApiDocument) => void][] = [
    ["operations", "a fifth operation", (d) => (d.paths["/agents"].delete = { ...d.paths["/agents"].get, operationId: "deleteAgents" })],
    ["operations", "an undefined tag", (d) => (d.paths["/agents"].get.tags = ["people"])],
    [
      "acls",
      "an ACL placeholder that is not a path parameter",
      (d) => (d.paths["/agents/by-id/{agent_id}"].get["x-required-acl"] = "agentd.agents.by-id.{id}.read"),
    ],
    [
      "acls",
      "a description that does not name the ACL",
      (d) => (d.paths["/agents"].get.description = "Returns the status of every agent."),
    ],
    ["security", "no global security", (d) => delete d.security],
    ["security", "a token in the query", (d) => (d.components.securitySchemes.token.in = "query")],
    ["security", "an operation without security", (d) => (d.paths["/agents"].get.security = [])],
    [
      "examples",
      "an inline example",
      (d) =>
        (d.components.responses.NoSuchAgent.content["application/json"].examples.noSuchAgent = {
          value: { error: "no such agent" },
        }),
    ],
    ["examples", "an example that does not validate", (d) => (d.components.examples.AgentPaused.value.paused = "yes")],
    ["examples", "a logged-out agent that is paused", (d) => Object.assign(d.components.examples.AgentLoggedOut.value, { paused: true, paused_reason: "lunch" })],
    ["examples", "a logged-out agent with a state interface", (d) => (d.components.examples.AgentLoggedOut.value.state_interface = "PJSIP/bob")],
    ["examples", "a pause reason without a pause", (d) => (d.components.examples.AgentLoggedIn.value.paused_reason = "lunch")],
    ["examples", "a request body example that does not validate", (d) => (d.components.examples.PauseWithReason.value.reason = "")],
    [
      "examples",
      "a response without examples",
      (d) => delete d.components.responses.NotLoggedIn.content["application/json"].examples,
    ],
    ["examples", "no paused agent example", (d) => (d.components.examples.AgentPaused.value = d.components.examples.AgentLoggedIn.value)],
    ["errorIdentifiers", "an error response whose body names no identifier", (d) => (d.components.responses.NotLoggedIn.content["application/json"].schema = { $ref: "#/components/schemas/Error" })],
    [
      "errorIdentifiers",
      "an operation's own error response whose body names no identifier",
      (d) =>
        (d.paths["/agents"].get.responses["400"] = {
          description: "Invalid.",
          content: { "application/json": { schema: { $ref: "#/components/schemas/Error" }, examples: { notAnAgentId: { $ref: "#/components/examples/NotAnAgentId" } } } },
        }),
    ],
    ["errorIdentifiers", "an example carrying another response's identifier", (d) => (d.components.examples.NoSuchAgent.value.error = "not logged in")],
    ["badRequestPlaces", "an operation by id whose 400 example names agent_number", (d) => (d.paths["/agents/by-id/{agent_id}"].get.responses["400"].$ref = "#/components/responses/BadAgentNumber")],
    ["badRequestPlaces", "a GET whose 400 example names a body", (d) => (d.paths["/agents/by-number/{agent_number}"].get.responses["400"].$ref = "#/components/responses/BadPauseRequest")],
    ["agentStatus", "a tenth field", (d) => (d.components.schemas.AgentStatus.properties.queue = { type: "string", description: "Queue." })],
    ["agentStatus", "an optional field", (d) => d.components.schemas.AgentStatus.required.pop()],
    ["agentStatus", "additional properties allowed", (d) => delete d.components.schemas.AgentStatus.additionalProperties],
    ["agentStatus", "an undescribed field", (d) => delete d.components.schemas.AgentStatus.properties.context.description],
    ["history", "a marker naming an unknown release", (d) => (d.components.schemas.Error["x-since"] = "16.04")],
    [
      "history",
      "a release without a marker",
      (d) => (d.servers = d.servers.map(({ ["x-since"]: _since, ["x-until"]: _until, ...s }: any) => s)),
    ],
    [
      "history",
      "a release missing from the table",
      (d) => (d.info.description = d.info.description.replace(/^\| 15\.19 \|.*\n/m, "")),
    ],
  ];

  it.each(mutations)("%s: %s", (check, _what, mutate) => {
    expect(checks[check](broken(mutate)).length).toBeGreaterThan(0);
  });

  const lintMutations: [string, string, (doc: OpenApiDocument) => void][] = [
    ["operation-description", "an operation without a description", (d) => delete d.paths["/agents"].get.description],
    ["rule/operation-id-camel-case", "a snake_case operationId", (d) => (d.paths["/agents"].get.operationId = "list_agents")],
    ["rule/operation-summary-sentence-case", "a Title Case summary", (d) => (d.paths["/agents"].get.summary = "List All Agents")],
    ["rule/operation-summary-sentence-case", "a summary ending in a period", (d) => (d.paths["/agents"].get.summary = "List agents.")],
    ["rule/operation-required-acl", "a missing ACL", (d) => delete d.paths["/agents"].get["x-required-acl"]],
    ["rule/operation-required-acl-shape", "an ACL outside the agentd namespace", (d) => (d.paths["/agents"].get["x-required-acl"] = "agents.read")],
    ["rule/operation-required-acl-shape", "an ACL with an unknown action", (d) => (d.paths["/agents"].get["x-required-acl"] = "agentd.agents.list")],
    ["agentd/release-markers", "an unquoted release (YAML reads 15.10 as 15.1)", (d) => (d.components.schemas.Error["x-since"] = 15.1)],
    ["agentd/release-markers", "a marker naming an unlisted release", (d) => (d.components.schemas.Error["x-since"] = "16.04")],
    ["agentd/release-markers", "releases listed out of order", (d) => d.info["x-releases"].reverse()],
    // The state rules (if/then) are checked by the linter too, not only by Ajv.
    ["no-invalid-media-type-examples", "a logged-out agent with an extension", (d) => (d.components.examples.AgentLoggedOut.value.extension = "1002")],
    ["no-invalid-media-type-examples", "a pause reason without a pause", (d) => (d.components.examples.AgentLoggedIn.value.paused_reason = "lunch")],
  ];

  // One `redocly lint` process for every broken copy: each file gets its own report.
  let reports: (LintTotals & { code: number })[] = [];
  beforeAll(async () => {
    const dir = await scratchDir();
    const files = lintMutations.map((_mutation, i) => `broken-${i}.yaml`);
    for (const [i, [, , mutate]] of lintMutations.entries()) {
      const doc = structuredClone(loadContract().document);
      mutate(doc);
      await writeFile(path.join(dir, files[i]!), dump(doc));
    }
    await cp(path.join(repoRoot, "redocly.yaml"), path.join(dir, "redocly.yaml"));
    await cp(path.join(repoRoot, "plugins"), path.join(dir, "plugins"), { recursive: true });
    await cp(path.join(repoRoot, "docs"), path.join(dir, "docs"), { recursive: true });
    reports = await lint(dir, files);
  });

  it.each(lintMutations.map((m, i) => [...m, i] as const))("lint rule %s fails on %s", (rule, _what, _mutate, i) => {
    const report = reports[i];
    expect(report?.problems.map((p) => p.ruleId)).toContain(rule);
    expect(report?.errors).toBeGreaterThan(0);
  });

  it("generate:check fails when generated/ is stale", async () => {
    // A copy of just what the check reads, with one operationId renamed.
    const dir = await scratchDir();
    for (const entry of ["scripts", "devkit", "plugins", "generated", "package.json"]) {
      await cp(path.join(repoRoot, entry), path.join(dir, entry), { recursive: true });
    }
    await symlink(path.join(repoRoot, "node_modules"), path.join(dir, "node_modules"), "dir");
    const source = await readFile(path.join(repoRoot, "openapi.yaml"), "utf8");
    await writeFile(path.join(dir, "openapi.yaml"), source.replace("operationId: listAgents", "operationId: listAllAgents"));
    const result = await exec("npm", ["run", "--silent", "generate:check"], dir);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/out of date/);
  });

  it("generate:check fails when a published release's types are stale", async () => {
    const dir = await scratchDir();
    for (const entry of ["scripts", "devkit", "plugins", "generated", "releases", "openapi.yaml", "package.json"]) {
      await cp(path.join(repoRoot, entry), path.join(dir, entry), { recursive: true });
    }
    await symlink(path.join(repoRoot, "node_modules"), path.join(dir, "node_modules"), "dir");
    const frozen = path.join(dir, "releases", "openapi-15.18.yaml");
    await writeFile(frozen, (await readFile(frozen, "utf8")).replace("operationId: listAgents", "operationId: listAllAgents"));
    const result = await exec("npm", ["run", "--silent", "generate:check"], dir);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/out of date with openapi\.yaml or releases\/: generated\/releases\/15\.18\.ts$/m);
  });

  it("generate removes a release's types left behind once its frozen file is gone, as generate:check asks", async () => {
    const dir = await scratchDir();
    for (const entry of ["scripts", "devkit", "plugins", "generated", "releases", "openapi.yaml", "package.json"]) {
      await cp(path.join(repoRoot, entry), path.join(dir, entry), { recursive: true });
    }
    await symlink(path.join(repoRoot, "node_modules"), path.join(dir, "node_modules"), "dir");
    await rm(path.join(dir, "releases", "openapi-17.05.yaml"));
    const check = await exec("npm", ["run", "--silent", "generate:check"], dir);
    expect(check.code).not.toBe(0);
    expect(check.stderr).toMatch(/: generated\/releases\/17\.05\.ts\nrun `npm run generate`/);
    // The generated/ half of `npm run generate` (the other writes .env.example from server/, not copied here).
    const generate = await exec(process.execPath, ["--import", "tsx", path.join("scripts", "generate.ts")], dir);
    expect(generate.code, generate.stderr).toBe(0);
    expect(existsSync(path.join(dir, "generated", "releases", "17.05.ts"))).toBe(false);
    expect(existsSync(path.join(dir, "generated", "releases", "15.19.ts"))).toBe(true);
    const again = await exec(process.execPath, ["--import", "tsx", path.join("scripts", "generate-check.ts")], dir);
    expect(again.code, again.stderr).toBe(0);
  });
});
