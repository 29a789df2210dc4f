// The version history held to the real diffs: each row of the history table
// names what its release changed, and `redocly diff` of the published
// releases (15.14 → 15.15 → 15.18 → 15.19 → 17.05) must show exactly that
// kind of change, classified as the row implies. releases/CHANGELOG.md is
// generated from the same diffs and must be up to date.
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { releaseReports, renderChangelog } from "../scripts/lib/changelog.js";
import type { ChangeReport } from "../scripts/lib/change-report.js";
import { changelogFile, frozenFile, frozenReleases, listedReleases } from "../scripts/lib/project.js";
import { diffVersions, frozenVersion } from "../scripts/lib/versions.js";
import type { DiffReport } from "../scripts/lib/redocly.js";
import { loadContract } from "./helpers/contract.js";

const GETS = ["GET /agents", "GET /agents/by-id/{agent_id}", "GET /agents/by-number/{agent_number}"];
const PAUSE = "POST /agents/by-number/{agent_number}/pause";

let reports = new Map<string, ChangeReport>();
let raw = new Map<string, DiffReport>();

beforeAll(async () => {
  const releases = frozenReleases();
  reports = new Map((await releaseReports()).map((report) => [report.to, report]));
  const pairs = releases.slice(1).map((release, i) => [frozenVersion(releases[i]!), frozenVersion(release)] as [ReturnType<typeof frozenVersion>, ReturnType<typeof frozenVersion>]);
  const diffs = await diffVersions(pairs);
  raw = new Map(diffs.map((diff, i) => [pairs[i]![1].label, diff]));
});

function report(release: string): ChangeReport {
  const found = reports.get(release);
  if (found === undefined) throw new Error(`no diff for ${release}`);
  return found;
}

const changesOf = (r: ChangeReport, operation: string) => r.groups.find((g) => g.operation === operation)?.changes ?? [];

/** The history table's row of a release, as written in openapi.yaml. */
function row(release: string): string {
  const line = String(loadContract().document.info.description)
    .split("\n")
    .find((l) => l.trim().startsWith(`| ${release} |`));
  if (line === undefined) throw new Error(`no history row for ${release}`);
  return line;
}

describe("the history table against the diffs of the published releases", () => {
  it("has a diff for every release after the baseline, none of them empty", () => {
    expect(frozenReleases()).toEqual(listedReleases());
    expect([...reports.keys()]).toEqual(listedReleases().slice(1));
    for (const [release, r] of reports) expect(r.groups.length, release).toBeGreaterThan(0);
  });

  it("reports no change of the history's own markers (x-since, x-until, badges): what they mark is reported itself", () => {
    for (const [release, r] of reports) {
      const kinds = r.groups.flatMap((g) => g.changes.map((c) => c.kind));
      expect(kinds.filter((kind) => /x-since|x-until|x-badges/.test(kind)), release).toEqual([]);
    }
  });

  it("15.15: state_interface on the three GETs, breaking no client", () => {
    expect(row("15.15")).toContain("`state_interface`");
    const r = report("15.15");
    for (const get of GETS) {
      expect(changesOf(r, get), get).toContainEqual(expect.objectContaining({ kind: "added", where: expect.stringMatching(/^response 200 body(\[\])?\.state_interface$/) }));
    }
    expect(r.groups.map((g) => g.operation).sort()).toEqual([...GETS].sort());
    expect(r.breaking).toBe(0);
  });

  it("15.18: the servers (HTTPS instead of plain HTTP), and nothing else", () => {
    expect(row("15.18")).toMatch(/HTTPS instead of HTTP/);
    const r = report("15.18");
    expect(r.groups.map((g) => g.operation)).toEqual(["Whole API"]);
    for (const change of changesOf(r, "Whole API")) expect(change.where).toMatch(/^servers\//);
    expect(changesOf(r, "Whole API")).toContainEqual(expect.objectContaining({ breaking: true, why: [expect.stringMatching(/`http:\/\/localhost:9493\/1\.0` became `https:\/\/localhost:9493\/1\.0`/)] }));
  });

  it("15.19: security on every operation, which breaks old clients", () => {
    expect(row("15.19")).toMatch(/token in `X-Auth-Token` is required on every route/);
    const r = report("15.19");
    // The requirement is global: every operation of 15.19 has it, none overrides it.
    expect(changesOf(r, "Whole API")).toContainEqual({ breaking: true, kind: "added", where: "security", what: "", why: ["Authentication became required. (security-requirement-changed)"] });
    // What a bare place (`components`, `allOf/1`) added or removed is named.
    expect(changesOf(r, "Whole API")).toContainEqual(expect.objectContaining({ kind: "added", where: "components", what: "securitySchemes `token`" }));
    for (const get of GETS) {
      // Redocly's removal and addition of the 503's member are one change of its identifiers: none was lost.
      expect(changesOf(r, get).filter((change) => change.where === "response 503 body/allOf/1"), get).toEqual([
        {
          breaking: true,
          kind: "modified",
          where: "response 503 body/allOf/1",
          what: "the error identifiers + `authentication server unreachable`",
          why: ["the identifiers `error` can take changed (schema-combinator-changed)"],
        },
      ]);
    }
    const published = loadContract(frozenFile("15.19"));
    expect(published.document.security).toEqual([{ token: [] }]);
    for (const { operationId, operation } of published.operations()) expect(operation.security, operationId).toBeUndefined();
    for (const operation of [...GETS, PAUSE]) {
      expect(changesOf(r, operation), operation).toContainEqual(expect.objectContaining({ kind: "added", where: "response 401" }));
    }
    expect(r.breaking).toBeGreaterThan(0);
  });

  it("17.05: reason on pause, paused and paused_reason in the status, breaking no client", () => {
    expect(row("17.05")).toMatch(/`reason`.*`paused` and `paused_reason`/);
    const r = report("17.05");
    for (const get of GETS) {
      for (const field of ["paused", "paused_reason"]) {
        expect(changesOf(r, get), `${get} ${field}`).toContainEqual(expect.objectContaining({ kind: "added", where: expect.stringMatching(new RegExp(`^response 200 body(\\[\\])?\\.${field}$`)) }));
      }
    }
    expect(changesOf(r, PAUSE)).toContainEqual(expect.objectContaining({ breaking: false, kind: "added", where: "request body" }));
    expect(changesOf(r, "Whole API")).toContainEqual(expect.objectContaining({ kind: "added", where: "tags/1", what: "the tag `events`" }));
    expect(changesOf(r, "Whole API")).toContainEqual(expect.objectContaining({ kind: "added", where: "webhooks", what: "the webhooks `agentPaused`, `agentUnpaused`" }));
    for (const get of GETS) {
      expect(changesOf(r, get), get).toContainEqual(expect.objectContaining({ kind: "added", what: 'the state rule "An agent not paused has no pause reason."' }));
    }
    // The body the diff added is the one with `reason`.
    const body = raw.get("17.05")?.changes.find((c) => c.kind === "added" && c.path.endsWith("~1pause/post/requestBody"));
    expect(JSON.stringify(body?.revision?.value)).toMatch(/"properties":\{"reason":/);
    expect(r.breaking).toBe(0);
  });
});

describe("releases/CHANGELOG.md", () => {
  it("is what the published releases generate (npm run release -- --changelog rewrites it)", async () => {
    expect(readFileSync(changelogFile, "utf8")).toBe(await renderChangelog());
  });
});
