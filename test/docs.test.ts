// The docs site: `npm run docs` must give one self-contained HTML page
// (Redoc inlined, nothing fetched from a CDN) that documents the four
// operations and the version history.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadContract, repoRoot } from "./helpers/contract.js";

const run = promisify(execFile);
const contract = loadContract();
const RELEASES = ["15.15", "15.18", "15.19", "17.05"];

/**
 * Every resource the page would load from the network when opened: external
 * `<script src>`, `<link href>` (stylesheet, preload, modulepreload…), ES
 * module imports of a URL and CSS `@import`s.
 */
function externalResources(html: string): string[] {
  const found: string[] = [];
  const remote = String.raw`(?:https?:)?//[^"'\s>)]+`;
  const patterns = [
    new RegExp(String.raw`<script\b[^>]*\bsrc\s*=\s*["']?(${remote})`, "gi"),
    new RegExp(String.raw`<link\b[^>]*\bhref\s*=\s*["']?(${remote})`, "gi"),
    new RegExp(String.raw`\bimport\s*(?:[\w{}*,\s]+\bfrom\s*)?\(?\s*["'\`](${remote})`, "gi"),
    new RegExp(String.raw`@import\s+(?:url\(\s*)?["']?(${remote})`, "gi"),
  ];
  for (const pattern of patterns) {
    for (const match of html.matchAll(pattern)) if (match[1] !== undefined) found.push(match[1]);
  }
  return found;
}

let html = "";
let scratch = "";

beforeAll(async () => {
  await run("npm", ["run", "--silent", "docs"], { cwd: repoRoot, maxBuffer: 16 * 1024 * 1024 });
  html = await readFile(path.join(repoRoot, "docs", "index.html"), "utf8");
  scratch = await mkdtemp(path.join(tmpdir(), "agentd-docs-"));
});

afterAll(async () => {
  if (scratch !== "") await rm(scratch, { recursive: true, force: true });
});

describe("npm run docs", () => {
  it("builds docs/index.html with the four operation summaries", () => {
    const summaries = contract.operations().map((op) => op.operation.summary as string);
    expect(summaries).toHaveLength(4);
    for (const summary of summaries) expect(html).toContain(summary);
  });

  it("renders the version history table with every release", () => {
    expect(html).toContain("Version history");
    // Pre-rendered table cells, readable before any script runs.
    for (const release of RELEASES) expect(html).toMatch(new RegExp(`<td>${release.replace(".", "\\.")}</td>`));
  });

  it("loads no script or stylesheet from the network", () => {
    expect(externalResources(html)).toEqual([]);
  });

  it("carries the Redoc bundle inline, so the page works offline", () => {
    const inlineScripts = [...html.matchAll(/<script\b(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/gi)].map((m) => m[1] ?? "");
    expect(Math.max(0, ...inlineScripts.map((s) => s.length))).toBeGreaterThan(500_000);
  });

  // The check above must be able to fail: Redocly's default (CDN) build is
  // exactly what it has to reject.
  it("would reject a build that loads Redoc from the CDN", async () => {
    const output = path.join(scratch, "cdn.html");
    await run(path.join(repoRoot, "node_modules", ".bin", "redocly"), ["build-docs", "openapi.yaml", "-o", output], {
      cwd: repoRoot,
      maxBuffer: 16 * 1024 * 1024,
    });
    const cdnBuild = await readFile(output, "utf8");
    expect(externalResources(cdnBuild).length).toBeGreaterThan(0);
    expect(externalResources('<link rel="stylesheet" href="https://cdn.example/x.css">')).toHaveLength(1);
    expect(externalResources('<script src="http://cdn.example/x.js"></script>')).toHaveLength(1);
  });
});
