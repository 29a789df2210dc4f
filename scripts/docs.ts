// npm run docs: the documentation site, every page one self-contained file
// (Redoc inlined with --inlineBundle, the CSP template of redocly.yaml):
//   docs/index.html               the current contract (apis entry `main`),
//                                 linking every release page and showing the changelog;
//   docs/releases/<release>.html  each published release (apis entry agentd@<release>).
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { frozenReleases, projectRoot, releaseAlias } from "./lib/project.js";
import { redocly } from "./lib/redocly.js";

interface Page {
  alias: string;
  output: string;
  title: string;
}

const pages: Page[] = [
  { alias: "main", output: path.join("docs", "index.html"), title: "Agent service" },
  ...frozenReleases().map((release) => ({
    alias: releaseAlias(release),
    output: path.join("docs", "releases", `${release}.html`),
    title: `Agent service ${release}`,
  })),
];

await mkdir(path.join(projectRoot, "docs", "releases"), { recursive: true });

async function build(page: Page): Promise<void> {
  const outcome = await redocly(["build-docs", page.alias, "--inlineBundle", "--title", page.title, "-o", page.output]);
  if (outcome.code !== 0) throw new Error(`redocly build-docs ${page.alias} failed:\n${outcome.stdout}${outcome.stderr}`);
  console.log(`wrote ${page.output} (${page.alias})`);
}

// Two at a time: each build is a Redocly process of its own.
const queue = [...pages];
await Promise.all(
  [0, 1].map(async () => {
    for (let page = queue.shift(); page !== undefined; page = queue.shift()) await build(page);
  }),
);
