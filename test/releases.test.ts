// The release views: one apis entry of redocly.yaml per release of
// info.x-releases, each bundled by Redocly with the plugin's release-view
// decorator. Every view must lint with no problem and be the contract as
// that release saw it (upstream's facts per release); releases compare as
// numbers; a published release is never overwritten; each one's types are
// exported as agentd/types/<release>.
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { load } from "js-yaml";
import { frozenFile, listedReleases, readConfig, releaseAlias } from "../scripts/lib/project.js";
import { bundleInto, bundleView, lintBundled, readJson } from "../scripts/lib/redocly.js";
import { repoRoot } from "../devkit/root.js";
import { run } from "../devkit/run.js";
import type { OpenApiDocument } from "./helpers/contract.js";

const releases = listedReleases();
const aliases = ["main", ...releases.map(releaseAlias)];

let scratch = "";
const views = new Map<string, { file: string; document: OpenApiDocument }>();

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), "agentd-views-"));
  await Promise.all(
    aliases.map(async (alias) => {
      const text = await bundleView(alias);
      const file = path.join(scratch, `${alias}.yaml`);
      await writeFile(file, text);
      views.set(alias, { file, document: load(text) as OpenApiDocument });
    }),
  );
});

afterAll(async () => {
  if (scratch !== "") await rm(scratch, { recursive: true, force: true });
});

function view(alias: string): OpenApiDocument {
  const found = views.get(alias);
  if (found === undefined) throw new Error(`no view ${alias}`);
  return found.document;
}

const operations = (d: OpenApiDocument): Record<string, any>[] =>
  Object.values<Record<string, any>>(d.paths).flatMap((item) => Object.values<Record<string, any>>(item));

const BASE_FIELDS = ["id", "origin_uuid", "number", "extension", "context", "logged"];

/** Upstream's contract at each release (../shared/reference/upstream-agentd.md). */
const AT_RELEASE: Record<string, { fields: string[]; servers: string[]; token: boolean; pauseBody: boolean; events: boolean }> = {
  "15.14": { fields: BASE_FIELDS, servers: ["http://localhost:9493/1.0"], token: false, pauseBody: false, events: false },
  "15.15": { fields: [...BASE_FIELDS, "state_interface"], servers: ["http://localhost:9493/1.0"], token: false, pauseBody: false, events: false },
  "15.18": { fields: [...BASE_FIELDS, "state_interface"], servers: ["https://localhost:9493/1.0", "https://{host}:{port}/1.0"], token: false, pauseBody: false, events: false },
  "15.19": { fields: [...BASE_FIELDS, "state_interface"], servers: ["https://localhost:9493/1.0", "https://{host}:{port}/1.0"], token: true, pauseBody: false, events: false },
  "17.05": {
    fields: [...BASE_FIELDS, "paused", "paused_reason", "state_interface"],
    servers: ["https://localhost:9493/1.0", "https://{host}:{port}/1.0"],
    token: true,
    pauseBody: true,
    events: true,
  },
};

describe("redocly.yaml", () => {
  const config = readConfig();

  it("has main first, then one agentd@<release> entry per release of info.x-releases, each deriving that release", () => {
    // `redocly lint openapi.yaml` takes the first entry whose root matches: main's strict rules.
    expect(Object.keys(config.apis ?? {})).toEqual(aliases);
    for (const release of releases) {
      const entry = config.apis?.[releaseAlias(release)];
      expect(entry?.root).toBe("./openapi.yaml");
      expect(entry?.decorators).toEqual({ "agentd/release-view": { release }, "remove-unused-components": "on" });
    }
  });

  it("relaxes a lint rule for a release only where the release demands it: no authentication before 15.19", () => {
    for (const release of releases) {
      const rules = config.apis?.[releaseAlias(release)]?.rules;
      if (view(releaseAlias(release)).security === undefined) {
        expect(rules, release).toEqual({ "security-defined": "off", "rule/operation-required-acl": "off" });
      } else expect(rules, release).toBeUndefined();
    }
  });

  it("lists the upstream facts of every release this test knows, and no other", () => {
    expect(Object.keys(AT_RELEASE)).toEqual(releases);
  });
});

describe("every view", () => {
  it.each(aliases)("%s lints with the project's rules and 0 problems", async (alias) => {
    const report = await lintBundled(views.get(alias)!.file, alias);
    expect(report.problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer ?? "?"}`)).toEqual([]);
    expect({ errors: report.errors, warnings: report.warnings }).toEqual({ errors: 0, warnings: 0 });
  });

  it.each(aliases)("%s shows the release that introduced each element", (alias) => {
    const d = view(alias);
    for (const operation of operations(d)) expect(operation["x-badges"], operation.operationId).toEqual([{ name: `Since ${releases[0]}` }]);
    // A webhook is marked on its path item: its operation shows that release.
    for (const [name, item] of Object.entries((d.webhooks ?? {}) as Record<string, { post: { "x-badges"?: unknown } }>)) {
      expect(item.post["x-badges"], name).toEqual([{ name: "Since 17.05" }]);
    }
    const stateInterface = d.components.schemas.AgentStatus.properties.state_interface;
    if (stateInterface !== undefined) expect(stateInterface.description).toMatch(/Since release 15\.15\.$/);
  });
});

describe.each(releases)("the view of %s", (release) => {
  const facts = (): (typeof AT_RELEASE)[string] => AT_RELEASE[release]!;
  const d = (): OpenApiDocument => view(releaseAlias(release));

  it("is that release, knowing no later one", () => {
    expect(d().info.version).toBe(release);
    expect(d().info["x-releases"]).toEqual(releases.slice(0, releases.indexOf(release) + 1));
    expect(JSON.stringify(d())).not.toContain('"x-until":');
  });

  it("has the agent status fields of the release, all required, in every example", () => {
    const status = d().components.schemas.AgentStatus;
    expect(Object.keys(status.properties).sort()).toEqual([...facts().fields].sort());
    expect([...status.required].sort()).toEqual([...facts().fields].sort());
    // A paused agent exists only where a status can say so.
    const named = ["AgentLoggedIn", "AgentLoggedOut", ...(facts().pauseBody ? ["AgentPaused"] : [])];
    expect(d().components.examples.AgentPaused !== undefined).toBe(facts().pauseBody);
    for (const name of named) {
      expect(Object.keys(d().components.examples[name].value).sort(), name).toEqual([...facts().fields].sort());
    }
    for (const agent of d().components.examples.AgentList.value) expect(Object.keys(agent).sort()).toEqual([...facts().fields].sort());
  });

  it("has the servers of the release, HTTPS first from 15.18", () => {
    expect(d().servers.map((s: { url: string }) => s.url)).toEqual(facts().servers);
  });

  it("requires the token, with its 401 and 403 and ACLs, exactly from 15.19", () => {
    const token = facts().token;
    expect(d().security).toEqual(token ? [{ token: [] }] : undefined);
    expect(d().components.securitySchemes?.token !== undefined).toBe(token);
    for (const operation of operations(d())) {
      expect(Object.keys(operation.responses).includes("401"), operation.operationId).toBe(token);
      expect(Object.keys(operation.responses).includes("403"), operation.operationId).toBe(token);
      expect(typeof operation["x-required-acl"], operation.operationId).toBe(token ? "string" : "undefined");
    }
    const unavailable = d().components.responses.ServiceUnavailable.content["application/json"];
    expect(Object.keys(unavailable.examples).includes("authServerUnreachable")).toBe(token);
    // The identifiers a 503 carries: the choice left with one is that one (release-view collapses it).
    const error = unavailable.schema.allOf[1].properties.error;
    if (token) expect(error.oneOf.map((branch: { const: string }) => branch.const)).toEqual(["database unavailable", "authentication server unreachable"]);
    else expect(error).toEqual({ type: "string", const: "database unavailable", description: "The database did not answer." });
  });

  it("takes a pause body (with reason, 413 and 415) exactly from 17.05", () => {
    const pause = d().paths["/agents/by-number/{agent_number}/pause"].post;
    expect(pause.requestBody !== undefined).toBe(facts().pauseBody);
    expect(Object.keys(pause.responses).includes("413")).toBe(facts().pauseBody);
    expect(Object.keys(pause.responses).includes("415")).toBe(facts().pauseBody);
    if (facts().pauseBody) expect(Object.keys(d().components.schemas.PauseRequest.properties)).toEqual(["reason"]);
  });

  it("has unpause in every release, taking no body but {}, with 413 and 415 from 17.05 as pause", () => {
    const unpause = d().paths["/agents/by-number/{agent_number}/unpause"].post;
    expect(unpause.operationId).toBe("unpauseAgentByNumber");
    expect(unpause.requestBody.required).toBe(false);
    expect(d().components.schemas.UnpauseRequest).toMatchObject({ type: "object", additionalProperties: false, properties: {} });
    expect(Object.keys(unpause.responses)).toEqual(expect.arrayContaining(["204", "400", "404", "409", "429", "500", "503"]));
    expect(Object.keys(unpause.responses).includes("413")).toBe(facts().pauseBody);
    expect(Object.keys(unpause.responses).includes("415")).toBe(facts().pauseBody);
  });

  // The prose of a view says what that release had: a paragraph marked
  // `<!-- x-since -->` appears from its release on, and no marker is left.
  it("describes tokens and ACLs exactly from 15.19, and the pause's reason exactly from 17.05, leaving no marker", () => {
    const text = JSON.stringify(d());
    expect(text).not.toContain("<!-- x-since");
    for (const operation of operations(d())) expect(String(operation.description).includes("Required ACL:"), operation.operationId).toBe(facts().token);
    expect(String(d().components.responses.TooManyRequests.description).includes("token")).toBe(facts().token);
    expect(String(d().components.responses.ServiceUnavailable.description).includes("authentication")).toBe(facts().token);
    const pause = String(d().paths["/agents/by-number/{agent_number}/pause"].post.description);
    expect(pause.includes("reason")).toBe(facts().pauseBody);
    expect(String(d().paths["/agents/by-number/{agent_number}/unpause"].post.description).includes("paused_reason")).toBe(facts().pauseBody);
    expect(String(d().info.description).split("## ")[0]!.includes("reason")).toBe(facts().pauseBody);
  });

  it("has the events (webhooks agentPaused, agentUnpaused) exactly from 17.05", () => {
    const webhooks = Object.keys(d().webhooks ?? {}).sort();
    expect(webhooks).toEqual(facts().events ? ["agentPaused", "agentUnpaused"] : []);
    if (!facts().events) expect(Object.keys(d().components.schemas ?? {}).filter((name) => name.includes("Event"))).toEqual([]);
  });

  it("keeps no component it does not use", () => {
    const text = JSON.stringify(d().paths) + JSON.stringify(d().webhooks ?? {}) + JSON.stringify(d().components);
    for (const [section, entries] of Object.entries<Record<string, unknown>>(d().components)) {
      if (section === "securitySchemes") continue;
      for (const name of Object.keys(entries)) expect(text, `${section}/${name}`).toContain(`"#/components/${section}/${name}"`);
    }
  });
});

describe("the view of the current contract (main)", () => {
  it("is the latest release without what a release removed: no plain-HTTP server", () => {
    const d = view("main");
    expect(d.info.version).toBe(releases.at(-1));
    expect(d.servers.map((s: { url: string }) => s.url)).toEqual(AT_RELEASE[releases.at(-1)!]!.servers);
  });

  it("links every published release's page and carries the changelog", () => {
    const description = String(view("main").info.description);
    for (const release of releases) expect(description).toContain(`[${release}](releases/${release}.html)`);
    expect(description).toMatch(/^## Changelog$/m);
    expect(description).toMatch(/^### Changes in 15\.19$/m);
  });
});

/** `fixture`'s view at each release (by name), as Redocly bundles it with the release-view decorator. */
async function fixtureViews(fixture: object, at: Record<string, string>): Promise<Record<string, OpenApiDocument>> {
  const dir = await mkdtemp(path.join(tmpdir(), "agentd-fixture-"));
  try {
    const root = path.join(dir, "fixture.json");
    await writeFile(root, JSON.stringify(fixture));
    const apis = Object.fromEntries(Object.entries(at).map(([name, release]) => [name, { root, decorators: { "agentd/release-view": { release } } }]));
    const files = await bundleInto(dir, apis);
    return Object.fromEntries(await Promise.all(Object.keys(at).map(async (name) => [name, (await readJson(files[name]!)) as OpenApiDocument] as const)));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("release numbers", () => {
  // A contract whose releases sort differently as text (15.10 < 15.9) and as numbers.
  const fixture = {
    openapi: "3.1.0",
    info: { title: "Fixture", version: "15.18", "x-releases": ["15.9", "15.10", "15.18"] },
    servers: [{ url: "https://example.test/old", "x-until": "15.10" }, { url: "https://example.test/new", "x-since": "15.10" }],
    paths: {},
    components: {
      schemas: {
        Thing: {
          type: "object",
          required: ["nine", "ten", "eighteen"],
          properties: {
            nine: { type: "string", "x-since": "15.9" },
            ten: { type: "string", "x-since": "15.10" },
            eighteen: { type: "string", "x-since": "15.18" },
          },
        },
      },
    },
  };

  it("compare as numbers: 15.9 < 15.10 < 15.18", async () => {
    const views = await fixtureViews(fixture, { nine: "15.9", ten: "15.10", eighteen: "15.18" });
    const seen = (name: string) => {
      const d = views[name]!;
      return { servers: d.servers.map((s: { url: string }) => s.url), properties: Object.keys(d.components.schemas.Thing.properties), required: d.components.schemas.Thing.required };
    };
    expect(seen("nine")).toEqual({ servers: ["https://example.test/old"], properties: ["nine"], required: ["nine"] });
    expect(seen("ten")).toEqual({ servers: ["https://example.test/new"], properties: ["nine", "ten"], required: ["nine", "ten"] });
    expect(seen("eighteen")).toEqual({ servers: ["https://example.test/new"], properties: ["nine", "ten", "eighteen"], required: ["nine", "ten", "eighteen"] });
  });

  it("stay quoted strings in openapi.yaml and in every published release", () => {
    const unquoted = /^\s*(?:x-since|x-until|version):\s*\d/m;
    expect(readFileSync(path.join(repoRoot, "openapi.yaml"), "utf8")).not.toMatch(unquoted);
    for (const release of releases) expect(readFileSync(frozenFile(release), "utf8"), release).not.toMatch(unquoted);
  });
});

describe("choices and references in a view", () => {
  const fixture = {
    openapi: "3.1.0",
    info: { title: "Fixture", version: "2.0", "x-releases": ["1.0", "2.0"] },
    paths: {},
    components: {
      schemas: {
        Old: { type: "string", description: "Old." },
        New: { type: "integer", description: "New.", "x-since": "2.0" },
        Reason: { type: "string", description: "Why." },
        Alias: { $ref: "#/components/schemas/Reason" },
        // A branch dropped for its own marker, and one dropped for its reference.
        ByMarker: { type: "string", oneOf: [{ const: "a", description: "A." }, { const: "b", "x-since": "2.0" }] },
        ByReference: { oneOf: [{ $ref: "#/components/schemas/Old" }, { $ref: "#/components/schemas/New" }] },
        // The survivor's keywords clash with its parent's: merging would lose `required: [b]`.
        Clash: { type: "object", required: ["a"], oneOf: [{ required: ["b"] }, { required: ["c"], "x-since": "2.0" }] },
        // The survivor was introduced later than its parent: its marker does not move up.
        Replaced: { type: "string", oneOf: [{ const: "a", "x-until": "2.0" }, { const: "b", "x-since": "2.0" }] },
        Body: {
          type: "object",
          properties: {
            direct: { $ref: "#/components/schemas/Reason", "x-since": "2.0" },
            chained: { $ref: "#/components/schemas/Alias", "x-since": "2.0" },
          },
        },
      },
    },
  };

  it("a choice left with one schema is that schema, unless their keywords clash; a note follows the referenced text", async () => {
    const views = await fixtureViews(fixture, { one: "1.0", two: "2.0" });
    const one = views.one!.components.schemas;
    const two = views.two!.components.schemas;
    expect(one.ByMarker).toEqual({ type: "string", const: "a", description: "A." });
    expect(one.ByReference).toEqual({ $ref: "#/components/schemas/Old" });
    expect(one.Clash).toEqual({ type: "object", required: ["a"], oneOf: [{ required: ["b"] }] });
    expect(one.Replaced).toEqual({ type: "string", const: "a" });
    expect(two.Replaced).toEqual({ type: "string", const: "b" });
    expect(two.ByMarker.oneOf).toHaveLength(2);
    expect(two.Body.properties.direct.description).toBe("Why.\n\nSince release 2.0.");
    expect(two.Body.properties.chained.description).toBe("Why.\n\nSince release 2.0.");
  });
});

describe("npm run release", () => {
  async function release(args: string[]): Promise<{ code: number; out: string }> {
    const { code, stdout, stderr } = await run("npm", ["run", "--silent", "release", "--", ...args], { cwd: repoRoot });
    return { code, out: stdout + stderr };
  }

  it("has published every release of the history", () => {
    for (const r of releases) expect(existsSync(frozenFile(r)), `releases/openapi-${r}.yaml`).toBe(true);
  });

  it("refuses to overwrite a published release, leaving it as it was", async () => {
    const before = readFileSync(frozenFile("17.05"), "utf8");
    const outcome = await release(["17.05"]);
    expect(outcome.code).toBe(1);
    expect(outcome.out).toContain("releases/openapi-17.05.yaml is published and frozen");
    expect(outcome.out).toContain("npm run release -- 17.05 --amend");
    expect(readFileSync(frozenFile("17.05"), "utf8")).toBe(before);
  });

  it("refuses a release the contract does not list", async () => {
    const outcome = await release(["99.99"]);
    expect(outcome.code).toBe(2);
    expect(outcome.out).toMatch(/99\.99 is not a release of the contract: add it to info\.x-releases/);
  });
});

describe("types per release", () => {
  const packageJson = JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { exports: Record<string, { types: string; default: string }> };

  it.each(releases)("exports %s's types as agentd/types/<release>, built into dist", (r) => {
    expect(existsSync(path.join(repoRoot, "generated", "releases", `${r}.ts`))).toBe(true);
    const resolved = fileURLToPath(import.meta.resolve(`agentd/types/${r}`));
    expect(resolved).toBe(path.join(repoRoot, "dist", "generated", "releases", `${r}.js`));
    expect(packageJson.exports["./types/*"]?.types).toBe("./dist/generated/releases/*.d.ts");
    expect(existsSync(resolved.replace(/\.js$/, ".d.ts")), "run npm run build").toBe(true);
  });
});
