// npm run docs: the documentation site, every page one self-contained file
// (Redoc inlined with --inlineBundle, the CSP template of redocly.yaml):
//   docs/index.html               the current contract (apis entry `main`),
//                                 with the code samples, linking every release
//                                 page and showing the changelog;
//   docs/releases/<release>.html  each published release (apis entry agentd@<release>);
//   beside each page, the contract it shows (the latest release's frozen
//   file as openapi.yaml, or the release's releases/openapi-<release>.yaml),
//   linked from its release bar.
// Every page carries the same release switcher; a release page older than
// the latest release says so and links the current page. Each page is built
// from its view as bundled, with the state rules as prose
// (lib/state-rules-prose.ts), each `oneOf`'s type and description on its
// cases (lib/one-of-cases.ts), and each description's paragraphs on one line
// (lib/unwrapped-prose.ts).
import { copyFile, mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { apiEntry, frozenReleases, projectRoot, releaseAlias } from "./lib/project.js";
import { bundleInto, readJson, redocly, withScratch } from "./lib/redocly.js";
import { oneOfFieldOnCases } from "./lib/one-of-cases.js";
import { stateRulesAsProse } from "./lib/state-rules-prose.js";
import { unwrapDescriptions } from "./lib/unwrapped-prose.js";

interface Page {
  alias: string;
  /** Relative to the project. */
  output: string;
  title: string;
  /** null: the current contract. */
  release: string | null;
}

const releases = frozenReleases();
const latest = releases.at(-1);
const pages: Page[] = [
  { alias: "main", output: path.join("docs", "index.html"), title: "Agent service", release: null },
  ...releases.map((release) => ({
    alias: releaseAlias(release),
    output: path.join("docs", "releases", `${release}.html`),
    title: `Agent service ${release}`,
    release,
  })),
];

/**
 * The contract a page shows, as published beside it: its release's frozen
 * file. The current page's is the latest release's, as `openapi.yaml`:
 * openapi.yaml itself holds every release at once (a server 15.18 removed,
 * the x-since markers), which a reader's tools would take as today's.
 */
const contractSource = (page: Page): string => path.join("releases", `openapi-${page.release ?? latest}.yaml`);
const contractFileName = (page: Page): string => (page.release === null ? "openapi.yaml" : path.basename(contractSource(page)));

const escapeHtml = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** The switcher (and, on an older release's page, the notice) above the page, with links relative to it. */
function releaseNav(page: Page): string {
  const href = (target: Page): string => path.relative(path.dirname(page.output), target.output).split(path.sep).join("/");
  const current = pages[0]!;
  const links = pages.map((target) => {
    const label = target.release === null ? "Current contract" : target.release;
    const here = target === page ? ' aria-current="page"' : "";
    return `<a href="${escapeHtml(href(target))}"${here}>${escapeHtml(label)}</a>`;
  });
  if (page.release === null) links.push(`<a href="#section/changelog">Changelog</a>`);
  else links.push(`<a href="${escapeHtml(href(current))}#section/changes-in-${escapeHtml(page.release)}">Changes in ${escapeHtml(page.release)}</a>`);
  // The contract itself, for tools: the page shows it rewritten for reading (the state rules as prose, samples added).
  links.push(`<a class="agentd-contract-file" href="${escapeHtml(contractFileName(page))}">${escapeHtml(contractFileName(page))}</a>`);
  const notice =
    page.release !== null && page.release !== latest
      ? `<p class="agentd-not-latest" role="note">This is release ${escapeHtml(page.release)}, not the latest: ` +
        `the latest release is ${escapeHtml(latest ?? "")}. <a href="${escapeHtml(href(current))}">Go to the current contract</a>.</p>`
      : "";
  return `<nav class="agentd-releases" aria-label="Releases"><span>Releases:</span> ${links.join(" ")}</nav>${notice}`;
}

// Redoc's sidebar shows Redocly's logo from cdn.redoc.ly, a request the
// page's security policy blocks (a broken image, or none). The same
// attribution, drawn in the page, needs no network.
const LOGOS: [string, string][] = [
  ["https://cdn.redoc.ly/redoc/logo-mini-full.svg", svgDataUri(64, "Redocly")],
  ["https://cdn.redoc.ly/redoc/logo-mini.svg", svgDataUri(14, "R")],
];

function svgDataUri(width: number, text: string): string {
  // Dark text: the template inverts it in Redoc's dark mode (html.dark), which the reader may also switch by hand.
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="14"><text x="0" y="11" font-family="sans-serif" font-size="12" font-weight="bold" fill="#444">${text}</text></svg>`;
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString("base64")}`;
}

async function withLocalLogos(file: string): Promise<void> {
  let html = await readFile(file, "utf8");
  for (const [url, local] of LOGOS) {
    // A newer Redoc that draws its logo otherwise must be looked at, not passed silently.
    if (!html.includes(url)) throw new Error(`${file}: Redoc no longer references ${url}; check its sidebar logo again`);
    html = html.split(url).join(local);
  }
  if (html.includes("cdn.redoc.ly")) throw new Error(`${file}: still references cdn.redoc.ly`);
  await writeFile(file, html);
}

await mkdir(path.join(projectRoot, "docs", "releases"), { recursive: true });

/** The page's view, as its apis entry bundles it, with the state rules as prose (lib/state-rules-prose.ts): the file the page is built from. */
async function pageDocument(page: Page, scratch: string): Promise<string> {
  const entry = apiEntry(page.alias);
  // A folder per page: two pages are built at once.
  const dir = await mkdtemp(path.join(scratch, "page-"));
  const bundled = await bundleInto(dir, { [page.alias]: { root: path.resolve(projectRoot, entry.root), decorators: entry.decorators } });
  const document = await readJson(bundled[page.alias]!);
  stateRulesAsProse(document);
  oneOfFieldOnCases(document);
  await unwrapDescriptions(document);
  const file = path.join(dir, "page.json");
  await writeFile(file, JSON.stringify(document));
  return file;
}

async function build(page: Page, scratch: string): Promise<void> {
  await copyFile(path.join(projectRoot, contractSource(page)), path.join(projectRoot, path.dirname(page.output), contractFileName(page)));
  const outcome = await redocly([
    "build-docs",
    await pageDocument(page, scratch),
    "--inlineBundle",
    "--title",
    page.title,
    `--templateOptions.releaseNav=${releaseNav(page)}`,
    "-o",
    page.output,
  ]);
  if (outcome.code !== 0) throw new Error(`redocly build-docs ${page.alias} failed:\n${outcome.stdout}${outcome.stderr}`);
  await withLocalLogos(path.join(projectRoot, page.output));
  console.log(`wrote ${page.output} (${page.alias})`);
}

// Two at a time: each build is a Redocly process of its own.
const queue = [...pages];
await withScratch((scratch) =>
  Promise.all(
    [0, 1].map(async () => {
      for (let page = queue.shift(); page !== undefined; page = queue.shift()) await build(page, scratch);
    }),
  ),
);
