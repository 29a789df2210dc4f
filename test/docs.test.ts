// The docs site: `npm run docs` must give self-contained HTML pages (Redoc
// inlined, nothing fetched from a CDN): the current contract with its five
// operations, the version history, links to every published release's page
// and the changelog, and one page per published release.
import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../devkit/root.js";
import { run } from "../devkit/run.js";
import { loadContract } from "./helpers/contract.js";

const contract = loadContract();
const RELEASES: string[] = contract.document.info["x-releases"];

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
const releasePages = new Map<string, string>();

beforeAll(async () => {
  // docs/ is built once per run by the global setup (test/setup/build.ts).
  html = await readFile(path.join(repoRoot, "docs", "index.html"), "utf8");
  for (const release of RELEASES) {
    releasePages.set(release, await readFile(path.join(repoRoot, "docs", "releases", `${release}.html`), "utf8"));
  }
  scratch = await mkdtemp(path.join(tmpdir(), "agentd-docs-"));
});

afterAll(async () => {
  if (scratch !== "") await rm(scratch, { recursive: true, force: true });
});

describe("npm run docs", () => {
  it("builds docs/index.html with the five operation summaries", () => {
    const summaries = contract.operations().map((op) => op.operation.summary as string);
    expect(summaries).toHaveLength(5);
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

  it("links every published release's page and shows the changelog", () => {
    for (const release of RELEASES) expect(html).toContain(`href="releases/${release}.html"`);
    expect(html).toMatch(/<h2[^>]*>.*Changelog/);
    expect(html).toContain("Authentication became required.");
    // The file's note to its maintainers stays in the file.
    expect(readFileSync(path.join(repoRoot, "releases", "CHANGELOG.md"), "utf8")).toContain("Do not edit by hand.");
    expect(html).not.toContain("Do not edit by hand");
  });

  it("puts beside each page the contract it shows, as its source file", async () => {
    // The current page's: the latest release as published, not openapi.yaml with every release in it.
    expect(await readFile(path.join(repoRoot, "docs", "openapi.yaml"), "utf8")).toBe(await readFile(path.join(repoRoot, "releases", `openapi-${RELEASES.at(-1)}.yaml`), "utf8"));
    expect(html).toContain('href="openapi.yaml"');
    for (const [release, page] of releasePages) {
      const file = `openapi-${release}.yaml`;
      expect(await readFile(path.join(repoRoot, "docs", "releases", file), "utf8"), release).toBe(await readFile(path.join(repoRoot, "releases", file), "utf8"));
      expect(page, release).toContain(`href="${file}"`);
    }
  });

  it("shows the release that introduced each element", () => {
    expect(html).toContain(`Since ${RELEASES[0]}`);
    expect(html).toContain("Since release 15.15.");
    expect(html).toContain("Since release 17.05.");
  });

  it("builds a self-contained page per published release, behind the same Content-Security-Policy", () => {
    const csp = /<meta http-equiv="Content-Security-Policy" content="default-src 'none';/;
    expect(html).toMatch(csp);
    for (const [release, page] of releasePages) {
      expect(page, release).toMatch(csp);
      expect(page).toContain(`<title>Agent service ${release}</title>`);
      expect(externalResources(page), release).toEqual([]);
      expect(page.length, release).toBeGreaterThan(500_000);
      expect(page).toContain(`"version":"${release}"`);
    }
    expect(releasePages.get("15.14")).not.toContain("state_interface");
    expect(releasePages.get("15.15")).toContain("state_interface");
  });

  it("carries the Redoc bundle inline, so the page works offline", () => {
    const inlineScripts = [...html.matchAll(/<script\b(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/gi)].map((m) => m[1] ?? "");
    expect(Math.max(0, ...inlineScripts.map((s) => s.length))).toBeGreaterThan(500_000);
  });

  // The check above must be able to fail: Redocly's default (CDN) build is
  // exactly what it has to reject.
  it("would reject a build that loads Redoc from the CDN", async () => {
    const output = path.join(scratch, "cdn.html");
    const build = await run(path.join(repoRoot, "node_modules", ".bin", "redocly"), ["build-docs", "openapi.yaml", "-o", output], { cwd: repoRoot });
    expect(build.code, build.stdout + build.stderr).toBe(0);
    const cdnBuild = await readFile(output, "utf8");
    expect(externalResources(cdnBuild).length).toBeGreaterThan(0);
    expect(externalResources('<link rel="stylesheet" href="https://cdn.example/x.css">')).toHaveLength(1);
    expect(externalResources('<script src="http://cdn.example/x.js"></script>')).toHaveLength(1);
  });
});
