// npm run contract:gate, the command a reviewer runs on a contract change, and
// npm run contract:diff, the report they paste into the review. On the
// repository itself the gate is part of `npm run check`; here it runs on
// broken copies of the project in temporary directories: each breaking change of the issue must
// fail it with a finding that names it, each harmless one must pass, and a
// configuration that turns redocly diff's rules off must not pass silently.
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../devkit/root.js";
import { run, type RunResult } from "../devkit/run.js";
import type { OpenApiDocument } from "./helpers/contract.js";
import { addRelease, copyProject } from "./helpers/project-copy.js";
import type { ProjectCopy } from "./helpers/project-copy.js";

type Outcome = RunResult;

const npm = (args: string[]): Promise<Outcome> => run("npm", ["run", "--silent", ...args], { cwd: repoRoot, env: { ...process.env, NO_COLOR: "1" } });

const BY_ID = "/agents/by-id/{agent_id}";
const BY_NUMBER = "/agents/by-number/{agent_number}";
const PAUSE = "/agents/by-number/{agent_number}/pause";

/** Removes an AgentStatus field everywhere a client would see it (schema, required, examples). */
function dropStatusField(d: OpenApiDocument, field: string): void {
  const status = d.components.schemas.AgentStatus;
  delete status.properties[field];
  status.required = status.required.filter((name: string) => name !== field);
  for (const example of Object.values<any>(d.components.examples)) {
    for (const value of Array.isArray(example.value) ? example.value : [example.value]) {
      if (value !== null && typeof value === "object" && "logged" in value) delete value[field];
    }
  }
}

interface Case {
  what: string;
  /** Changes the copy: its contract, and redocly.yaml when the case needs it. */
  prepare: (copy: ProjectCopy) => Promise<void>;
}

interface FailingCase extends Case {
  /** What the gate's output must say. */
  finding: RegExp;
}

const edit = (mutate: (d: OpenApiDocument) => void) => (copy: ProjectCopy) => copy.editContract(mutate);

// Each is a direct edit of openapi.yaml, so the published releases also stop
// matching; what is checked is the breaking-change finding against 17.05.
const MUST_FAIL: FailingCase[] = [
  { what: "an operation removed", prepare: edit((d) => delete d.paths[BY_ID].get), finding: /Operation `GET \/agents\/by-id\/\{agent_id\}` was removed\..*operation-removed/ },
  { what: "a path removed", prepare: edit((d) => delete d.paths[BY_ID]), finding: /path-removed/ },
  { what: "a response status removed", prepare: edit((d) => delete d.paths[BY_NUMBER].get.responses["404"]), finding: /response-removed\)[\s\S]*where: GET \/agents\/by-number\/\{agent_number\} response 404/ },
  { what: "a response property removed", prepare: edit((d) => dropStatusField(d, "context")), finding: /Property `context`.*was removed.*property-removed/ },
  { what: "a response enum value removed", prepare: edit((d) => d.components.schemas.ErrorDetail.properties.location.enum.pop()), finding: /lost values: 'body'.*agentd\/response-enum-values-removed/ },
  { what: "a request property newly required", prepare: edit((d) => (d.components.schemas.PauseRequest.required = ["reason"])), finding: /required-properties-added/ },
  {
    what: "a parameter newly required",
    prepare: edit((d) => (d.paths["/agents"].get.parameters = [{ name: "context", in: "query", required: true, description: "Only this context.", schema: { type: "string" } }])),
    finding: /parameter-became-required/,
  },
  { what: "a type changed", prepare: edit((d) => (d.components.schemas.AgentStatus.properties.logged.type = "string")), finding: /Type.*from 'boolean' to 'string'.*schema-type-changed/ },
  { what: "maxLength lowered", prepare: edit((d) => (d.components.schemas.PauseReason.maxLength = 40)), finding: /`maxLength` of `reason` changed from '80' to '40'.*schema-constraint-changed/ },
  { what: "a pattern narrowed", prepare: edit((d) => (d.components.schemas.AgentNumber.pattern = "^[0-9]{4}$")), finding: /`pattern`.*schema-constraint-changed/ },
  { what: "a minimum raised", prepare: edit((d) => (d.components.schemas.AgentId.minimum = 10)), finding: /Lower bound changed from '>= 1' to '>= 10'.*schema-constraint-changed/ },
  {
    what: "a security requirement added",
    prepare: edit((d) => {
      d.components.securitySchemes.tenant = { type: "apiKey", in: "header", name: "X-Tenant", description: "The tenant." };
      d.security = [{ token: [], tenant: [] }];
    }),
    finding: /security-requirement-changed/,
  },
  {
    what: "a response property made nullable",
    prepare: edit((d) => (d.components.schemas.AgentStatus.properties.origin_uuid.type = ["string", "null"])),
    finding: /Type.*widened from 'string' to 'string \| null'.*schema-type-changed/,
  },
  {
    what: "a response property made optional",
    prepare: edit((d) => (d.components.schemas.AgentStatus.required = d.components.schemas.AgentStatus.required.filter((n: string) => n !== "logged"))),
    finding: /required-properties-removed/,
  },
  {
    // Clients branch on `error` (upstream's raise with body["error"]): a new name breaks them.
    what: "an error identifier renamed",
    prepare: edit((d) => {
      d.components.responses.NoSuchAgent.content["application/json"].schema.allOf[1].properties.error.const = "agent not found";
      d.components.examples.NoSuchAgent.value.error = "agent not found";
    }),
    finding: /no such agent[\s\S]*agent not found[\s\S]*where: GET \/agents\/by-id\/\{agent_id\} response 404 body\/allOf\/1\.error/,
  },
  {
    what: "an operation's required ACL changed",
    prepare: edit((d) => (d.paths[PAUSE].post["x-required-acl"] = "agentd.agents.pause.create")),
    finding: /required ACL changed from "agentd\.agents\.by-number\.\{agent_number\}\.pause\.create" to "agentd\.agents\.pause\.create".*agentd\/extension-contract-changed/,
  },
  {
    what: "an event's routing key on the bus changed",
    prepare: edit((d) => (d.webhooks.agentUnpaused.post["x-amqp"].routingKey = "status.agent.unpaused")),
    finding: /published on the bus changed \(routingKey "status\.agent\.unpause" → "status\.agent\.unpaused"\).*agentd\/extension-contract-changed/,
  },
  {
    what: "an event no longer published on the bus (x-amqp removed)",
    prepare: edit((d) => delete d.webhooks.agentPaused.post["x-amqp"]),
    finding: /no longer published on the bus.*agentd\/extension-contract-changed/,
  },
  // A webhook's headers are sent by the service and read by the receiver, its client.
  {
    what: "a webhook header renamed",
    prepare: edit((d) => (d.components.parameters.WebhookSignature.name = "webhook-sig")),
    finding: /`webhook-signature` header parameter the service sends was renamed to `webhook-sig`.*agentd\/webhook-parameter-changed[\s\S]*where: webhook agentPaused parameters\/2/,
  },
  {
    what: "a webhook header moved out of the headers",
    prepare: edit((d) => (d.components.parameters.WebhookId.in = "query")),
    finding: /`webhook-id` header parameter the service sends is now a query parameter.*agentd\/webhook-parameter-changed/,
  },
  {
    what: "a webhook header no longer always sent",
    prepare: edit((d) => (d.components.parameters.WebhookTimestamp.required = false)),
    finding: /`webhook-timestamp` header parameter is no longer always sent.*agentd\/webhook-parameter-changed/,
  },
  {
    what: "a webhook header no longer sent from a new release (x-until)",
    prepare: async (copy) => {
      await addRelease(copy, "18.01", "Deliveries are no longer signed.");
      await copy.editContract((d) => (d.components.parameters.WebhookSignature["x-until"] = "18.01"));
    },
    finding: /The service no longer sends the `webhook-signature` header parameter.*agentd\/webhook-parameter-changed/,
  },
  // Removal done right: marked x-until a new release, so no published release
  // changes and only the breaking-change check can see it.
  {
    what: "an operation removed in a new release (x-until), which empties its path",
    prepare: async (copy) => {
      await addRelease(copy, "18.01", "`GET /agents/by-id/{agent_id}` is removed.");
      await copy.editContract((d) => (d.paths[BY_ID].get["x-until"] = "18.01"));
    },
    finding: /Path `\/agents\/by-id\/\{agent_id\}` was removed.*path-removed/,
  },
];

const MUST_PASS: Case[] = [
  {
    what: "a new optional request property under a new release",
    prepare: async (copy) => {
      await addRelease(copy, "18.01", "Pause accepts an optional `until`.");
      await copy.editContract((d) => {
        d.components.schemas.PauseRequest.properties.until = { type: "string", format: "date-time", description: "When the pause ends.", "x-since": "18.01" };
      });
    },
  },
  {
    what: "a new response property under a new release",
    prepare: async (copy) => {
      await addRelease(copy, "18.01", "The agent status gains `queue`.");
      await copy.editContract((d) => {
        const status = d.components.schemas.AgentStatus;
        status.properties.queue = { type: ["string", "null"], description: "The agent's queue.", "x-since": "18.01" };
        status.required.push("queue");
        // Examples show it too: the release views drop it from them again.
        for (const example of Object.values<any>(d.components.examples)) {
          for (const value of Array.isArray(example.value) ? example.value : [example.value]) {
            if (value !== null && typeof value === "object" && "logged" in value) value.queue = null;
          }
        }
      });
    },
  },
  {
    what: "a new operation under a new release",
    prepare: async (copy) => {
      // Unpause is in every release; log-off (upstream's next operation) is not.
      await addRelease(copy, "18.01", "`POST /agents/by-number/{agent_number}/logoff`.");
      await copy.editContract((d) => {
        const pause = d.paths[PAUSE].post;
        d.paths["/agents/by-number/{agent_number}/logoff"] = {
          "x-since": "18.01",
          post: {
            ...pause,
            operationId: "logoffAgentByNumber",
            summary: "Log an agent off",
            "x-required-acl": "agentd.agents.by-number.{agent_number}.logoff.create",
            description: "Logs the agent off.\n\nRequired ACL: `agentd.agents.by-number.{agent_number}.logoff.create`.\n",
          },
        };
        delete d.paths["/agents/by-number/{agent_number}/logoff"].post.requestBody;
      });
    },
  },
  {
    what: "a new webhook header under a new release",
    prepare: async (copy) => {
      await addRelease(copy, "18.01", "Deliveries say which instance sent them.");
      await copy.editContract((d) => {
        d.components.parameters.WebhookSender = { name: "x-agentd-instance", in: "header", required: true, description: "The instance.", schema: { type: "string" }, "x-since": "18.01" };
        for (const webhook of Object.values<any>(d.webhooks)) webhook.post.parameters.push({ $ref: "#/components/parameters/WebhookSender" });
      });
    },
  },
  {
    what: "a description change",
    prepare: edit((d) => {
      d.paths["/agents"].get.description = "Lists every agent of the deployment, by `id`.\n\nRequired ACL: `agentd.agents.read`.\n";
      d.components.schemas.AgentStatus.properties.context.description = "Dialplan context of the agent's extension; null when logged out.";
      d.components.examples.AgentPaused.value.paused_reason = "coffee";
    }),
  },
];

/**
 * Runs every case's gate, a few at a time (each is a few Redocly processes),
 * with `args` (e.g. `--only breaking` for cases that only the breaking-change
 * check concerns).
 */
async function gateRuns<T extends Case>(cases: T[], args: string[] = [], concurrency = 2): Promise<Map<T, Outcome>> {
  const results = new Map<T, Outcome>();
  const queue = [...cases];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        const copy = await copyProject();
        try {
          await next.prepare(copy);
          results.set(next, await copy.run("contract-gate", args));
        } finally {
          await copy.remove();
        }
      }
    }),
  );
  return results;
}

const show = (outcome: Outcome | undefined): string => `exit ${String(outcome?.code)}\n${outcome?.stdout ?? ""}${outcome?.stderr ?? ""}`;

describe("the gate on broken copies", () => {
  let failing = new Map<FailingCase, Outcome>();
  let passing = new Map<Case, Outcome>();
  beforeAll(async () => {
    // A direct edit also changes the published releases, which the frozen
    // check (tested below) would report; these cases are about the other.
    failing = await gateRuns(MUST_FAIL, ["--only", "breaking"]);
    passing = await gateRuns(MUST_PASS);
  }, 900_000);

  it.each(MUST_FAIL.map((c) => [c.what, c] as const))("fails on %s, saying what, where and why", (_what, c) => {
    const outcome = failing.get(c);
    expect(outcome?.code, show(outcome)).toBe(1);
    expect(outcome?.stdout).toMatch(c.finding);
    expect(outcome?.stdout).toMatch(/why: +openapi\.yaml, taken as the next release, would break a client of 17\.05/);
  });

  it.each(MUST_PASS.map((c) => [c.what, c] as const))("passes on %s", (_what, c) => {
    const outcome = passing.get(c);
    expect(outcome?.code, show(outcome)).toBe(0);
  });
});

describe("the frozen-release check", () => {
  const copies: ProjectCopy[] = [];
  afterAll(async () => {
    await Promise.all(copies.map((copy) => copy.remove()));
  });
  const fresh = async (): Promise<ProjectCopy> => {
    const copy = await copyProject();
    copies.push(copy);
    return copy;
  };

  it("fails on a new element without x-since, naming every release it changes", async () => {
    const copy = await fresh();
    await copy.editContract((d) => {
      d.components.schemas.AgentStatus.properties.queue = { type: ["string", "null"], description: "The agent's queue." };
    });
    const gate = await copy.run("contract-gate", ["--only", "frozen"]);
    expect(gate.code, show(gate)).toBe(1);
    for (const release of ["15.14", "15.15", "15.18", "15.19", "17.05"]) {
      expect(gate.stdout).toContain(`✗ release ${release} would gain #/components/schemas/AgentStatus/properties/queue`);
    }
    expect(gate.stdout).toMatch(/where: releases\/openapi-15\.14\.yaml #\/components\/schemas\/AgentStatus\/properties\/queue/);
  });

  it("fails on an x-since that names no listed release, naming the element, and contract:diff refuses it too", async () => {
    const copy = await fresh();
    await copy.editContract((d) => {
      d.components.schemas.AgentStatus.properties.skills = { type: "string", description: "The agent's skills.", "x-since": "17.06" };
      d.paths["/agents"].get.description += '\n<!-- x-since: "17.06" -->\nA later paragraph.\n';
      // Listed, but inside a paragraph: it would drop only the paragraph's end.
      d.paths[BY_ID].get.description += 'A sentence\n<!-- x-since: "17.05" -->\nand its end.\n';
      // Found by a contract reviewer: an unquoted release made no marker, and its paragraph showed in every view.
      d.paths["/agents/by-number/{agent_number}"].get.description += "\n\n<!-- x-since: 17.05 -->\nA later paragraph.\n";
    });
    const gate = await copy.run("contract-gate");
    expect(gate.code, show(gate)).toBe(1);
    expect(gate.stdout).toContain('#/components/schemas/AgentStatus/properties/skills x-since "17.06"');
    expect(gate.stdout).toContain('#/paths/~1agents/get/description <!-- x-since: "17.06" --> names no release of info.x-releases');
    expect(gate.stdout).toContain('#/paths/~1agents~1by-id~1{agent_id}/get/description <!-- x-since: "17.05" --> must begin a paragraph');
    expect(gate.stdout).toContain('#/paths/~1agents~1by-number~1{agent_number}/get/description <!-- x-since: 17.05 --> is not a marker: write <!-- x-since: "<release>" --> on a line of its own');
    expect(gate.stdout).toContain("contract gate: FAILED: the release views cannot be derived from openapi.yaml");
    expect(gate.stderr).not.toMatch(/\n\s+at /);
    const diff = await copy.run("contract-diff");
    expect(diff.code, show(diff)).toBe(2);
    expect(diff.stderr).toContain('x-since "17.06"');
  });

  it("fails on new fields named like prose (description, summary, title): they are contract, not wording", async () => {
    const copy = await fresh();
    await copy.editContract((d) => {
      for (const name of ["description", "summary", "title"]) d.components.schemas.AgentStatus.properties[name] = { type: "string", description: `The agent's ${name}.` };
    });
    const gate = await copy.run("contract-gate", ["--only", "frozen"]);
    expect(gate.code, show(gate)).toBe(1);
    for (const name of ["description", "summary", "title"]) {
      expect(gate.stdout).toContain(`✗ release 15.14 would gain #/components/schemas/AgentStatus/properties/${name}`);
    }
  });

  it("fails on an edit of what an old release looked like, naming the release and the difference", async () => {
    const copy = await fresh();
    await copy.editContract((d) => (d.components.schemas.AgentStatus.properties.state_interface.maxLength = 64));
    const gate = await copy.run("contract-gate", ["--only", "frozen"]);
    expect(gate.code, show(gate)).toBe(1);
    expect(gate.stdout).toContain("✗ release 15.15 would change #/components/schemas/AgentStatus/properties/state_interface/maxLength");
    expect(gate.stdout).toContain("15.15 had 128, the contract now derives 64");
    expect(gate.stdout).not.toContain("release 15.14 would");
  });

  it("does not count prose: a description and an example's wording (text, numbers) changed in a frozen file pass", async () => {
    const copy = await fresh();
    await copy.editYaml("releases/openapi-15.15.yaml", (d) => {
      d.components.schemas.AgentStatus.properties.logged.description = "Logged in or not (reworded).";
      d.components.examples.AgentLoggedIn.value.context = "other-wording";
      d.components.examples.AgentLoggedIn.value.id = 7;
      d.components.parameters.AgentId.example = 3;
    });
    // The changelog, the frozen files' own diffs, shows the new wording: rewritten, as it always is.
    expect((await copy.run("release", ["--changelog"])).code).toBe(0);
    const gate = await copy.run("contract-gate");
    expect(gate.code, show(gate)).toBe(0);
  });

  // Three copies, three tests: as one test, its four runs of the gate and
  // one of the release command took longer than the test time-out on a
  // machine at half its usual speed.
  it("fails on a hand-edited changelog, which release --changelog rewrites", async () => {
    const edited = await fresh();
    const changelog = path.join(edited.dir, "releases", "CHANGELOG.md");
    const text = await readFile(changelog, "utf8");
    expect(text).toContain("**breaking**");
    await writeFile(changelog, text.replace("**breaking**", "non-breaking"));
    const gate = await edited.run("contract-gate", ["--only", "frozen"]);
    expect(gate.code, show(gate)).toBe(1);
    expect(gate.stdout).toContain("✗ releases/CHANGELOG.md is not what the published releases derive");
    expect(gate.stdout).toContain("npm run release -- --changelog rewrites it");
    // A frozen file edited by hand shows the same way: found by a contract reviewer, who
    // followed the advice and so made the edit part of the history.
    expect(gate.stdout).toContain("If a frozen file changed instead (git diff -- releases/ shows it), restore that file");
    // Rewriting it is the fix.
    expect((await edited.run("release", ["--changelog"])).code).toBe(0);
    expect((await edited.run("contract-gate", ["--only", "frozen"])).code).toBe(0);
  });

  it("fails on the newest published release removed, saying to restore it, not to rewrite the changelog", async () => {
    // The newest release listed but not frozen may just not have shipped yet:
    // the changelog's section is what says it was published.
    const unpublished = await fresh();
    await rm(path.join(unpublished.dir, "releases", "openapi-17.05.yaml"));
    const after = await unpublished.run("contract-gate", ["--only", "frozen"]);
    expect(after.code, show(after)).toBe(1);
    expect(after.stdout).toContain("✗ release 17.05 is published (releases/CHANGELOG.md has its section) but releases/openapi-17.05.yaml is gone");
    expect(after.stdout).toContain("git log --diff-filter=D -- releases/openapi-17.05.yaml");
    // Rewriting the changelog, the fix for a stale one, does not hide it.
    expect(after.stdout).not.toContain("npm run release -- --changelog");
  });

  it("fails on a release in the middle removed, said the same way, and not as a release to publish again from today's contract", async () => {
    const middle = await fresh();
    await rm(path.join(middle.dir, "releases", "openapi-15.18.yaml"));
    const gap = await middle.run("contract-gate", ["--only", "frozen"]);
    expect(gap.code, show(gap)).toBe(1);
    expect(gap.stdout).toContain("✗ release 15.18 is published (releases/CHANGELOG.md has its section) but releases/openapi-15.18.yaml is gone");
    expect(gap.stdout).not.toContain("npm run release -- 15.18");
  });

  it("fails when info.version is not the newest release of info.x-releases", async () => {
    const copy = await fresh();
    await addRelease(copy, "18.01", "Nothing yet.");
    await copy.editContract((d) => (d.info.version = "17.05"));
    const gate = await copy.run("contract-gate", ["--only", "frozen"]);
    expect(gate.code, show(gate)).toBe(1);
    expect(gate.stdout).toContain('✗ info.version is "17.05", but the newest release of info.x-releases is "18.01"');
    expect(gate.stdout).toContain('set info.version to "18.01", quoted');
  });

  it("passes again once the record is corrected on purpose with release --amend, which prints the difference", async () => {
    const copy = await fresh();
    await copy.editContract((d) => (d.components.schemas.PauseReason.maxLength = 100));
    expect((await copy.run("contract-gate")).code).toBe(1);
    const amend = await copy.run("release", ["17.05", "--amend"]);
    expect(amend.code, show(amend)).toBe(0);
    expect(amend.stdout).toMatch(/^--- a\/releases\/openapi-17\.05\.yaml$/m);
    expect(amend.stdout).toMatch(/^-\s+maxLength: 80$/m);
    expect(amend.stdout).toMatch(/^\+\s+maxLength: 100$/m);
    const gate = await copy.run("contract-gate");
    expect(gate.code, show(gate)).toBe(0);
  });
});

describe("the gate's guard against a silent redocly diff", () => {
  it("fails when redocly.yaml turns no diff rule on, instead of passing", async () => {
    const copy = await copyProject();
    try {
      await copy.editYaml("redocly.yaml", (config) => {
        config.extends = config.extends.filter((name: string) => name !== "diff-recommended");
        delete config.diff;
      });
      // A removal that no published release sees: without diff rules nothing else would catch it.
      await addRelease(copy, "18.01", "`GET /agents/by-id/{agent_id}` is removed.");
      await copy.editContract((d) => (d.paths[BY_ID].get["x-until"] = "18.01"));
      const gate = await copy.run("contract-gate");
      expect(gate.code, show(gate)).toBe(1);
      expect(gate.stdout).toContain("✗ redocly diff cannot see breaking changes");
    } finally {
      await copy.remove();
    }
  });
});

describe("npm run contract:diff", () => {
  it("reports the latest release against the working openapi.yaml by default, and exits 0", async () => {
    const report = await npm(["contract:diff"]);
    expect(report.code, show(report)).toBe(0);
    expect(report.stdout).toMatch(/^## Contract changes: 17\.05 → openapi\.yaml$/m);
  });

  it("groups the changes by operation and marks each breaking or not, as JSON", async () => {
    const report = await npm(["contract:diff", "--", "--from", "15.18", "--to", "15.19", "--format", "json"]);
    expect(report.code, show(report)).toBe(0);
    const json = JSON.parse(report.stdout) as { from: string; to: string; breaking: number; groups: { operation: string; changes: { breaking: boolean; where: string }[] }[] };
    expect({ from: json.from, to: json.to }).toEqual({ from: "15.18", to: "15.19" });
    expect(json.breaking).toBeGreaterThan(0);
    const operations = json.groups.map((g) => g.operation);
    expect(operations).toEqual(expect.arrayContaining(["Whole API", "GET /agents", "POST /agents/by-number/{agent_number}/pause"]));
    const whole = json.groups.find((g) => g.operation === "Whole API");
    expect(whole?.changes).toContainEqual(expect.objectContaining({ breaking: true, where: "security" }));
    expect(json.groups.find((g) => g.operation === "GET /agents")?.changes).toContainEqual(expect.objectContaining({ breaking: false, where: "response 401" }));
  });

  it("groups a webhook's changes under it, a webhook added or removed whole included", async () => {
    const copy = await copyProject();
    try {
      await addRelease(copy, "18.01", "Deliveries no longer carry webhook-id; a new event.");
      await copy.editContract((d) => {
        d.components.parameters.WebhookId["x-until"] = "18.01";
        d.webhooks.agentLoggedOff = { ...structuredClone(d.webhooks.agentUnpaused), "x-since": "18.01" };
        d.webhooks.agentLoggedOff.post.operationId = "agentLoggedOff";
      });
      const report = await copy.run("contract-diff", ["--format", "json"]);
      expect(report.code, show(report)).toBe(0);
      const json = JSON.parse(report.stdout) as { groups: { operation: string; changes: { breaking: boolean; kind: string; where: string }[] }[] };
      const group = (name: string) => json.groups.find((g) => g.operation === name)?.changes;
      expect(group("webhook agentLoggedOff")).toEqual([expect.objectContaining({ breaking: false, kind: "added", where: "" })]);
      expect(group("webhook agentPaused")).toContainEqual(expect.objectContaining({ breaking: true, where: "parameters/0" }));
      expect(json.groups.map((g) => g.operation)).not.toContain("Whole API");
    } finally {
      await copy.remove();
    }
  });

  it("exits 0 on a breaking change too (the gate is what fails), marking it breaking in Markdown", async () => {
    const copy = await copyProject();
    try {
      await copy.editContract((d) => delete d.paths[BY_ID].get);
      const report = await copy.run("contract-diff", ["--from", "17.05"]);
      expect(report.code, show(report)).toBe(0);
      expect(report.stdout).toMatch(/^\*\*Breaking:\*\*/m);
      expect(report.stdout).toMatch(/^### GET \/agents\/by-id\/\{agent_id\}$/m);
      expect(report.stdout).toMatch(/- \*\*breaking\*\* · removed.*Operation `GET \/agents\/by-id\/\{agent_id\}` was removed/);
    } finally {
      await copy.remove();
    }
  });

  it("takes a file or a git revision as well as a release, and refuses anything else with exit 2", async () => {
    const file = await npm(["contract:diff", "--", "--from", "releases/openapi-15.14.yaml", "--to", "15.15"]);
    expect(file.code, show(file)).toBe(0);
    expect(file.stdout).toMatch(/^## Contract changes: releases\/openapi-15\.14\.yaml → 15\.15$/m);
    expect(file.stdout).toContain("state_interface");
    const git = await npm(["contract:diff", "--", "--from", "HEAD"]);
    expect(git.code, show(git)).toBe(0);
    expect(git.stdout).toMatch(/^## Contract changes: HEAD:openapi\.yaml → openapi\.yaml$/m);
    const bad = await npm(["contract:diff", "--", "--from", "no-such-thing"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/neither a release/);
    const help = await npm(["contract:diff", "--", "--help"]);
    expect(help.code, show(help)).toBe(0);
    expect(help.stdout).toMatch(/^usage: npm run contract:diff -- /);
  });

  it("reports from a frozen file exactly what it reports from its release", async () => {
    const changes = async (from: string) => {
      const report = await npm(["contract:diff", "--", "--from", from, "--to", "17.05", "--format", "json"]);
      expect(report.code, show(report)).toBe(0);
      const json = JSON.parse(report.stdout) as { groups: { operation: string; changes: { kind: string; where: string }[] }[] };
      return json.groups.flatMap((g) => g.changes.map((c) => `${g.operation} ${c.kind} ${c.where}`)).sort();
    };
    expect(await changes("releases/openapi-15.19.yaml")).toEqual(await changes("15.19"));
  });
});
