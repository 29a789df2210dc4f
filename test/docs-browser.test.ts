// The docs site in a real browser: `npm run docs` is opened from disk in
// Debian's chromium (driven by playwright-core, no network), and what a reader
// sees is checked in the rendered page, not in the HTML text (docs.test.ts
// does that): the five operations, the X-Auth-Token scheme, the version
// history, the changelog and the links to the release pages, sidebar links
// that a new tab or a reload opens where they point, the pages of
// releases 15.18 (no token, no reason) and 17.05 (both), the release
// switcher and the not-the-latest notice of every page, the code samples of
// every operation and the webhook receivers, no broken image, and that no
// page sent anything to the network or asked for what its policy refused. Screenshots go to artifacts/ (git-ignored)
// for CI to keep.
//
// chromium is installed by .ci/run (`apt-get install chromium`). Without it
// this file fails, in CI and locally alike: a missing browser is never a skip.
import { access, constants, copyFile, cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../devkit/root.js";
import { run } from "../devkit/run.js";
import { LANGUAGES } from "../plugins/code-samples.js";
import { escapeRegExp } from "../server/escape-regexp.js";
import { loadContract } from "./helpers/contract.js";

const contract = loadContract();
const RELEASES: string[] = contract.document.info["x-releases"];
const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = path.join(repoRoot, "artifacts");

const CHROMIUM_ARGS = [
  // CI runs as root, where chromium refuses to start sandboxed.
  "--no-sandbox",
  "--disable-gpu",
  // Without these chromium phones Google's hosts on its own.
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
  // Belt and braces: even a request that slipped past the route below could
  // not resolve a host. The route still records it, so the test fails.
  "--host-resolver-rules=MAP * ~NOTFOUND",
];

/** Opens an operation of the agents tag from the sidebar; its section, once Redoc has drawn it. */
async function openOperation(page: Page, summary: string, operationId: string): Promise<Locator> {
  await page.getByRole("link", { name: "agents", exact: true }).click();
  await page.getByRole("link", { name: new RegExp(`^${escapeRegExp(summary)}\\b`) }).click();
  const section = page.locator(`[id="agents/${operationId.toLowerCase()}"]`);
  await section.waitFor({ state: "visible", timeout: 20_000 });
  return section;
}

/** Schemes that stay inside the browser; anything else is the network. */
const LOCAL_URL = /^(?:file|data|blob|about):/i;

interface OfflinePage {
  context: BrowserContext;
  page: Page;
  /** Requests that reached the network layer (then blocked here). */
  leaked: string[];
  /** Requests the page's Content-Security-Policy refused: it still asked for them. */
  refused: string[];
  /** Uncaught errors thrown by the page's scripts. */
  pageErrors: string[];
}

/**
 * A fresh browser context in which every non-local request is recorded and
 * aborted before it can go out. A request the page's own Content-Security-
 * Policy refuses never reaches the route: chromium reports it on the
 * console, and it is recorded apart (the page asked for it, a broken image
 * or a missing feature for its reader).
 */
async function openOffline(browser: Browser, file: string, colorScheme: "light" | "dark" = "light"): Promise<OfflinePage> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme });
  const leaked: string[] = [];
  const refused: string[] = [];
  const pageErrors: string[] = [];
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (LOCAL_URL.test(url)) return route.continue();
    leaked.push(url);
    return route.abort("blockedbyclient");
  });
  // WebSockets bypass context.route; they have their own interception.
  await context.routeWebSocket(/.*/, (ws) => {
    leaked.push(ws.url());
    return ws.close();
  });
  const page = await context.newPage();
  page.on("pageerror", (error) => pageErrors.push(error.message));
  page.on("console", (message) => {
    if (/violates the following Content Security Policy/.test(message.text())) refused.push(message.text());
  });
  await page.goto(pathToFileURL(file).href, { waitUntil: "load" });
  return { context, page, leaked, refused, pageErrors };
}

const MISSING_CHROMIUM =
  `${CHROMIUM} is missing: install Debian's chromium (as root: apt-get update && apt-get install -y chromium; ` +
  ".ci/run does this in CI). The docs browser test fails rather than skips without it.";

let browser: Browser | undefined;
let scratch = "";
let docs: OfflinePage | undefined;

/**
 * The shared browser and docs page. Without chromium every test fails with
 * the same message (a failing hook would only mark them skipped).
 */
function ready(): { browser: Browser; docs: OfflinePage } {
  if (browser === undefined || docs === undefined) throw new Error(MISSING_CHROMIUM);
  return { browser, docs };
}

beforeAll(async () => {
  try {
    await access(CHROMIUM, constants.X_OK);
  } catch {
    return; // reported by ready() in every test
  }
  scratch = await mkdtemp(path.join(tmpdir(), "agentd-docs-browser-"));
  // docs/ is built once per run by the global setup (test/setup/build.ts).
  // Opened from a private copy so another run rebuilding docs/ cannot swap
  // the file under the browser.
  const built = path.join(scratch, "index.html");
  await copyFile(path.join(repoRoot, "docs", "index.html"), built);
  await copyFile(path.join(repoRoot, "docs", "openapi.yaml"), path.join(scratch, "openapi.yaml"));
  await cp(path.join(repoRoot, "docs", "releases"), path.join(scratch, "releases"), { recursive: true });
  await mkdir(ARTIFACTS, { recursive: true });

  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  docs = await openOffline(browser, built);
});

afterAll(async () => {
  await browser?.close();
  if (scratch !== "") await rm(scratch, { recursive: true, force: true });
});

/**
 * After every test: what that test did on the page sent nothing to the
 * network and threw no script error. The logs are emptied, so each test is
 * answerable for its own requests only.
 */
function expectStayedOffline(opened: OfflinePage | undefined): void {
  if (opened === undefined) return; // the test itself already failed on the missing page
  const leaked = opened.leaked.splice(0);
  const refused = opened.refused.splice(0);
  const errors = opened.pageErrors.splice(0);
  expect(leaked, `requests that left the page: ${leaked.join(", ")}`).toEqual([]);
  expect(refused, "requests the page asked for and its security policy refused").toEqual([]);
  expect(errors).toEqual([]);
}

describe("the built docs in chromium", () => {
  afterEach(() => expectStayedOffline(docs));

  it("renders the version history with every release", async () => {
    const { page } = ready().docs;
    await page.getByRole("heading", { level: 2, name: "Version history" }).waitFor();
    const table = page.locator("table").filter({ has: page.getByRole("columnheader", { name: "Release" }) });
    await table.waitFor();
    const releases = (await table.locator("tbody tr td:first-child").allInnerTexts()).map((text) => text.trim());
    expect(releases).toEqual(RELEASES);
    await page.screenshot({ path: path.join(ARTIFACTS, "docs.png"), fullPage: true });
  });

  it("lists the front page's sections in the sidebar, the samples before the releases and the long changelog", async () => {
    const { page } = ready().docs;
    const wanted = ["Authentication", "Version history", "Code samples", "Receiving webhooks", "Releases", "Changelog"];
    // The sidebar: the outermost list holding the "agents" tag.
    const sidebar = page.locator("ul").filter({ has: page.getByRole("link", { name: "agents", exact: true }) }).first();
    const entries = (await sidebar.getByRole("link").allInnerTexts()).map((text) => text.trim());
    expect(entries.filter((entry) => wanted.includes(entry))).toEqual(wanted);
  });

  // Redoc routes by hash on this page: every entry of the sidebar must be a
  // link to this same file that a new tab, or a reload, opens where it
  // points (build-docs pre-rendered them as "/section/…", a file that does
  // not exist; docs/redoc-template.hbs).
  it("links every sidebar entry to a place in this page that a new tab or a reload opens", async () => {
    const { browser, docs } = ready();
    const { page } = docs;
    const sidebar = page.locator("ul").filter({ has: page.getByRole("link", { name: "agents", exact: true }) }).first();
    const hrefs = new Set<string>();
    // A tag's operations are in the sidebar only while the tag is open.
    for (const tag of ["agents", "events"]) {
      await page.getByRole("link", { name: tag, exact: true }).click();
      await sidebar.locator(`a[href*="#/${tag}/"]`).first().waitFor();
      for (const href of await sidebar.getByRole("link").evaluateAll((anchors) => anchors.map((a) => (a as HTMLAnchorElement).href))) hrefs.add(href);
    }
    const pageUrl = page.url().replace(/#.*$/, "");
    const targets = [...hrefs].map((href) => ({ href, file: href.replace(/#.*$/, ""), place: href.replace(/^[^#]*#\/?/, "") }));
    expect(targets.filter((target) => target.file !== pageUrl || !target.href.includes("#/"))).toEqual([]);
    const operations = contract.operations().map((op) => `agents/${(op.operation.operationId as string).toLowerCase()}`);
    const places = targets.map((target) => target.place);
    expect(places).toEqual(expect.arrayContaining(["section/errors", "section/changelog", ...operations, "events/agentpaused", "events/agentunpaused"]));

    // Opened as a new tab would, then reloaded: Redoc scrolls to the place's element.
    const fresh = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      await fresh.route("**/*", (route) => (LOCAL_URL.test(route.request().url()) ? route.continue() : route.abort("blockedbyclient")));
      const tab = await fresh.newPage();
      const atTop = (place: string) => tab.evaluate((id) => document.getElementById(id)?.getBoundingClientRect().top ?? null, place);
      for (const place of ["section/errors", "agents/pauseagentbynumber", "events/agentpaused"]) {
        const target = targets.find((t) => t.place === place)!;
        await tab.goto(target.href, { waitUntil: "load" });
        await expect.poll(() => atTop(place), { message: place, timeout: 20_000 }).toBeGreaterThanOrEqual(0);
        await expect.poll(() => atTop(place), { message: place }).toBeLessThan(100);
        await tab.reload({ waitUntil: "load" });
        expect(tab.url(), place).toBe(target.href);
        await expect.poll(() => atTop(place), { message: `${place}, reloaded`, timeout: 20_000 }).toBeGreaterThanOrEqual(0);
        await expect.poll(() => atTop(place), { message: `${place}, reloaded` }).toBeLessThan(100);
      }
    } finally {
      await fresh.close();
    }
  });

  it("renders each of the five operations when picked in the sidebar", async () => {
    const { page } = ready().docs;
    const summaries = contract.operations().map((op) => op.operation.summary as string);
    expect(summaries).toHaveLength(5);
    // Operations live under their tag, collapsed until the reader opens it;
    // following the menu exercises Redoc's client-side routing, which only
    // works once its script has run in the page.
    await page.getByRole("link", { name: "agents", exact: true }).click();
    for (const summary of summaries) {
      const exactly = escapeRegExp(summary);
      // The sidebar entry ("List agents GET"), not the heading's own
      // permalink ("link to List agents").
      await page.getByRole("link", { name: new RegExp(`^${exactly}\\b`) }).click();
      // Redoc renders operations lazily and re-renders them while scrolling,
      // so wait (with retries) for the heading to hold exactly the summary.
      // (Followed by the badge of the release that introduced it.)
      const heading = page.locator("h2").filter({ hasText: new RegExp(`^\\s*${exactly}\\s*(Since [\\d.]+)?\\s*$`) });
      await heading.waitFor({ state: "visible", timeout: 20_000 });
    }
    // The viewport only: Redoc renders operations lazily, so a full-page shot
    // of this long page is mostly blank placeholders.
    await page.screenshot({ path: path.join(ARTIFACTS, "docs-operation.png") });
  });

  it("shows the X-Auth-Token security scheme on the operations", async () => {
    const { page } = ready().docs;
    const scheme = contract.document.components.securitySchemes.token;
    expect(scheme).toMatchObject({ type: "apiKey", in: "header", name: "X-Auth-Token" });
    // Each operation's Security box opens the scheme's details.
    const details = page.getByText("View security details");
    expect(await details.count()).toBeGreaterThan(0);
    await details.first().click();
    const label = page.getByText("Header parameter name:", { exact: true });
    await label.waitFor({ state: "visible" });
    const row = (await label.locator("..").innerText()).replace(/\s+/g, " ").trim();
    expect(row).toBe(`Header parameter name: ${scheme.name}`);
    await page.screenshot({ path: path.join(ARTIFACTS, "docs-security.png") });
    // The details are a dialog over the page: close it for the tests after.
    await page.keyboard.press("Escape");
    await label.waitFor({ state: "hidden" });
  });

  // Redoc draws an allOf of if/then rules as "One of: case 1 / case 2" tabs,
  // the first showing fields as fixed values; the docs leave the rules to prose.
  it("shows an agent status as one object, its state rules as prose, not as cases of fixed values", async () => {
    const { page } = ready().docs;
    const section = await openOperation(page, "Get an agent by number", "getAgentByNumber");
    await expect.poll(() => section.innerText()).toContain("paused_reason");
    const text = await section.innerText();
    expect(text).not.toMatch(/case 1/i);
    // Each rule is said where the reader looks, in its fields' descriptions.
    expect(text).toContain("always false when not logged in");
    expect(text).toContain("null when not logged in");
    // And all of them in the response's description, which Redoc draws (not the schema's own).
    expect(text).toContain("State rules:");
    expect(text).toContain("An agent not paused has no pause reason.");
    // A rule's release note stays in its list item, not a paragraph between items.
    expect(text).toContain("An agent not logged in has no state interface. Since release 15.15.");
  });

  // Redoc draws a oneOf field as one tab per case, each with the case's own
  // description only: the docs put the field's own on every case.
  it("shows a field that is one of two cases with its own description and release note", async () => {
    const { page } = ready().docs;
    const section = await openOperation(page, "Get an agent by number", "getAgentByNumber");
    await expect.poll(() => section.innerText()).toMatch(/paused_reason[^]*One of:[^]*Reason given for the pause; null when not paused or when no reason was given\.\s*Since release 17\.05\.\s*Why the agent is paused/);

    await page.getByRole("link", { name: "events", exact: true }).click();
    await page.getByRole("link", { name: /^An agent was paused\b/ }).click();
    const event = page.locator("[id^='events/']").filter({ has: page.getByRole("heading", { level: 2, name: "An agent was paused" }) }).first();
    await event.waitFor({ state: "visible", timeout: 20_000 });
    await event.getByText("data", { exact: true }).first().click();
    // The event's "no reason" is the empty string, not null: said where the field is.
    await expect.poll(() => event.innerText()).toMatch(/paused_reason[^]*One of:[^]*the empty string when there is none[^]*Since release 17\.05\./);
  });

  // A description beside a $ref replaces the referenced one where Redoc
  // shows it: the release note must not take the place of the field's text.
  it("shows the pause body's reason with its rules and the release that introduced it", async () => {
    const { page } = ready().docs;
    const section = await openOperation(page, "Pause an agent", "pauseAgentByNumber");
    await expect.poll(() => section.innerText()).toContain("Why the agent is paused");
    // The field's own text, then its note (the request body's description has a note of its own).
    expect(await section.innerText()).toMatch(/bidirectional characters\.\s*Since release 17\.05\./);
  });

  it("says where a token comes from and what the code samples read", async () => {
    const { page } = ready().docs;
    // Redoc renders the sections near where the page is: go to each first (an earlier test may have left it elsewhere).
    const bodyText = () => page.locator("body").innerText();
    await page.getByRole("heading", { level: 2, name: "Authentication" }).first().scrollIntoViewIfNeeded();
    await expect.poll(bodyText).toContain("agentd token create --acl <ACL>");
    await page.getByRole("heading", { level: 2, name: "Code samples" }).scrollIntoViewIfNeeded();
    await expect.poll(bodyText).toContain("AGENTD_URL, the base URL with its version prefix");
    await expect.poll(bodyText).toContain("AGENTD_CACERT, the server's certificate when it is self-signed");
    await expect.poll(bodyText).toContain("save one as a .mts file");
    // "a token (see Authentication)" takes the reader there.
    await page.locator('a[href="#section/Authentication"]').click();
    await expect.poll(async () => (await page.getByRole("heading", { level: 2, name: "Authentication" }).first().boundingBox())?.y ?? -1).toBeLessThan(100);
    await expect.poll(bodyText).toContain("in the banner of its first start");
  });

  // Found by a docs reader's walk: Redoc's search index drops the line breaks of the
  // contract's wrapped prose, so excerpts ran words together ("Pausing anagent").
  it("shows search results with the prose's words apart", async () => {
    const { page } = ready().docs;
    await page.keyboard.press("Control+k");
    const search = page.getByPlaceholder("Search docs...");
    await search.last().fill("pausing");
    const excerpt = page.getByText("Pausing an agent that is already paused is not an error. The change is committed");
    try {
      await excerpt.first().waitFor({ state: "visible" });
    } finally {
      await page.keyboard.press("Escape");
    }
  });

  it("renders the changelog, with the breaking change of 15.19", async () => {
    const { page } = ready().docs;
    await page.getByRole("heading", { level: 2, name: "Changelog" }).scrollIntoViewIfNeeded();
    await page.getByRole("heading", { level: 2, name: "Changelog" }).waitFor({ state: "visible" });
    await page.getByRole("heading", { level: 3, name: "Changes in 15.19" }).waitFor({ state: "visible" });
    await expect.poll(() => page.getByText("Authentication became required.").count()).toBeGreaterThan(0);
    await page.getByRole("heading", { level: 2, name: "Changelog" }).screenshot({ path: path.join(ARTIFACTS, "docs-changelog.png") });
  });

  // Redoc names a oneOf field's type after its cases': the 503's error
  // values are strings, not "any".
  it("shows the 503's error, one of two values, as a string", async () => {
    const { page } = ready().docs;
    const section = await openOperation(page, "List agents", "listAgents");
    await section.getByRole("button", { name: /^503\b/ }).first().click();
    await expect.poll(() => section.innerText()).toMatch(/The database cannot be reached[^]*Body\s+application\/json\s+error\s+string\s+required\s+One of:\s+database unavailable\s+authentication server unreachable/);
    // Closed again, for the tests after.
    await section.getByRole("button", { name: /^503\b/ }).first().click();
  });

  it("links every release's page, and the link opens it", async () => {
    const { page } = ready().docs;
    for (const release of RELEASES) {
      // In the page's text (the release switcher above it links them too).
      expect(await page.locator(`#redoc a[href="releases/${release}.html"]`).innerText()).toBe(release);
    }
    await page.locator('#redoc a[href="releases/15.18.html"]').click();
    await page.waitForURL(/\/releases\/15\.18\.html$/);
    await expect.poll(() => page.title()).toBe("Agent service 15.18");
    await page.goBack();
  });
});

/** Opens a release's page and the pause operation on it. */
async function openPause(browser: Browser, release: string): Promise<OfflinePage> {
  const opened = await openOffline(browser, path.join(scratch, "releases", `${release}.html`));
  await opened.page.getByRole("link", { name: "agents", exact: true }).click();
  await opened.page.getByRole("link", { name: /^Pause an agent\b/ }).click();
  await opened.page.locator("h2").filter({ hasText: /^\s*Pause an agent\s*(Since [\d.]+)?\s*$/ }).waitFor({ state: "visible", timeout: 20_000 });
  return opened;
}

// Each release's page is that release: what the release did not have is not
// on it. The tests of a block share its page; each is checked for network requests.
describe("the page of release 15.18 in chromium", () => {
  let opened: OfflinePage | undefined;
  const page = (): Page => {
    if (opened === undefined) throw new Error("the 15.18 page did not open");
    return opened.page;
  };
  beforeAll(async () => {
    opened = await openPause(ready().browser, "15.18");
  });
  afterEach(() => expectStayedOffline(opened));
  afterAll(async () => {
    await opened?.context.close();
  });

  it("shows no token security: no Authentication section, no security box", async () => {
    expect(await page().title()).toBe("Agent service 15.18");
    expect(await page().getByRole("link", { name: "Authentication", exact: true }).count()).toBe(0);
    expect(await page().getByText("View security details").count()).toBe(0);
    expect(await page().getByText("X-Auth-Token").count()).toBe(0);
  });

  it("shows pause without a body, so without reason", async () => {
    await page().getByText("No request payload").first().waitFor({ state: "visible" });
    expect(await page().getByText("reason", { exact: true }).count()).toBe(0);
    await page().screenshot({ path: path.join(ARTIFACTS, "docs-15.18-pause.png") });
  });

  // Last: it leaves the page for the current contract's.
  it("links its changes, on the current contract's page", async () => {
    await page().getByRole("navigation", { name: "Releases" }).getByRole("link", { name: "Changes in 15.18", exact: true }).click();
    await expect.poll(() => page().title()).toBe("Agent service");
    const heading = page().getByRole("heading", { level: 3, name: "Changes in 15.18" }).first();
    await expect.poll(async () => (await heading.boundingBox())?.y ?? -1).toBeGreaterThanOrEqual(0);
    expect((await heading.boundingBox())!.y).toBeLessThan(100);
  });
});

describe("the page of release 17.05 in chromium", () => {
  let opened: OfflinePage | undefined;
  const page = (): Page => {
    if (opened === undefined) throw new Error("the 17.05 page did not open");
    return opened.page;
  };
  beforeAll(async () => {
    opened = await openPause(ready().browser, "17.05");
  });
  afterEach(() => expectStayedOffline(opened));
  afterAll(async () => {
    await opened?.context.close();
  });

  it("shows the token security", async () => {
    expect(await page().title()).toBe("Agent service 17.05");
    await expect.poll(() => page().getByText("View security details").count()).toBeGreaterThan(0);
    expect(await page().getByRole("link", { name: "Authentication", exact: true }).count()).toBe(1);
  });

  it("shows pause's optional reason, introduced by 17.05", async () => {
    const reason = page().getByText("reason", { exact: true }).first();
    await reason.waitFor({ state: "visible" });
    await expect.poll(() => page().getByText("Since release 17.05.").count()).toBeGreaterThan(0);
    await page().screenshot({ path: path.join(ARTIFACTS, "docs-17.05-pause.png") });
  });
});

// Every page of the site: the same release switcher (its own page marked),
// the notice on a release older than the latest, and no broken image.
describe("every page's release switcher, notice and images in chromium", () => {
  const pages = [
    { file: "index.html", title: "Agent service", release: null as string | null },
    ...RELEASES.map((release): { file: string; title: string; release: string | null } => ({ file: `releases/${release}.html`, title: `Agent service ${release}`, release })),
  ];
  const latest = RELEASES.at(-1);
  /** A link's target as a file of the site, relative to its folder ("releases/15.18.html"). */
  const siteFile = (href: string): string => path.relative(scratch, fileURLToPath(href.replace(/#.*$/, ""))).split(path.sep).join("/");

  // One walk through the site by its own switcher: each page is checked on
  // arrival, and its switcher's link to the next page is what opens it.
  it("the switcher on every page links every page and marks its own, an older release says it is not the latest, no image is broken, and following it walks the whole site", async () => {
    const opened = await openOffline(ready().browser, path.join(scratch, "index.html"));
    try {
      const { page } = opened;
      const switcher = page.getByRole("navigation", { name: "Releases" });
      for (const [at, target] of pages.entries()) {
        await expect.poll(() => page.title(), { message: target.file }).toBe(target.title);
        const links = await switcher
          .getByRole("link")
          .evaluateAll((anchors) => anchors.map((a) => ({ href: (a as HTMLAnchorElement).href, current: a.getAttribute("aria-current") })));
        const toPages = links.filter((link) => !link.href.includes("#") && link.href.endsWith(".html"));
        expect(toPages.map((link) => siteFile(link.href)), target.file).toEqual(pages.map((p) => p.file));
        expect(toPages.filter((link) => link.current === "page").map((link) => siteFile(link.href)), target.file).toEqual([target.file]);
        // The contract the page shows, as a file beside it: its release's frozen one (the latest's, on the current page).
        const contractFile = links.filter((link) => link.href.endsWith(".yaml")).map((link) => siteFile(link.href));
        const published = target.release === null ? "openapi.yaml" : `releases/openapi-${target.release}.yaml`;
        expect(contractFile, target.file).toEqual([published]);
        const frozen = `releases/openapi-${target.release ?? latest}.yaml`;
        expect(await readFile(path.join(scratch, published), "utf8"), target.file).toBe(await readFile(path.join(repoRoot, frozen), "utf8"));
        // A release's page links its changes in the changelog, which only the current page has.
        const changes = links.filter((link) => link.href.includes("#section/changes-in-")).map((link) => `${siteFile(link.href)}${link.href.replace(/^[^#]*/, "")}`);
        expect(changes, target.file).toEqual(target.release === null ? [] : [`index.html#section/changes-in-${target.release}`]);

        const notice = page.getByRole("note");
        if (target.release !== null && target.release !== latest) {
          expect(await notice.innerText(), target.file).toContain(`This is release ${target.release}, not the latest`);
          expect(siteFile(await notice.getByRole("link").evaluate((a) => (a as HTMLAnchorElement).href)), target.file).toBe("index.html");
        } else {
          expect(await notice.count(), target.file).toBe(0);
        }

        // Redoc's sidebar logo comes after its first render: wait for it, then no image may be broken.
        await expect.poll(() => page.locator("img").count(), { message: target.file }).toBeGreaterThan(0);
        await expect
          .poll(() => page.evaluate(() => Array.from(document.querySelectorAll("img")).filter((image) => !image.complete || image.naturalWidth === 0).map((image) => image.src.slice(0, 80))), { message: target.file })
          .toEqual([]);

        if (target.release === null) {
          await switcher.getByRole("link", { name: "Changelog" }).click();
          await page.getByRole("heading", { level: 2, name: "Changelog" }).waitFor({ state: "visible" });
        }
        const next = pages[(at + 1) % pages.length]!;
        await switcher.getByRole("link", { name: next.release ?? "Current contract", exact: true }).click();
      }
      // Back where the walk began.
      await expect.poll(() => page.title()).toBe(pages[0]!.title);
      expectStayedOffline(opened);
    } finally {
      await opened.context.close();
    }
  });
});

/** WCAG's contrast ratio of two computed CSS colours (`rgb(r, g, b)`). */
function contrast(a: string, b: string): number {
  const luminance = (color: string): number => {
    const [r, g, bl] = (color.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map((c) => {
      const v = Number(c) / 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
  };
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (light! + 0.05) / (dark! + 0.05);
}

// Redoc follows the reader's dark setting; the release bar and the notice
// above it are the project's own and must stay readable in both.
describe("the release bar in a dark colour scheme", () => {
  it("keeps its text readable (WCAG AA contrast) on an older release's page", async () => {
    const opened = await openOffline(ready().browser, path.join(scratch, "releases", "15.15.html"), "dark");
    try {
      for (const selector of [".agentd-releases", ".agentd-not-latest"]) {
        const { color, background } = await opened.page.locator(selector).evaluate((element) => {
          const style = getComputedStyle(element);
          return { color: style.color, background: style.backgroundColor };
        });
        expect(contrast(color, background), `${selector}: ${color} on ${background}`).toBeGreaterThanOrEqual(4.5);
      }
      // Found by a docs reader: the logo drawn in place of Redocly's CDN one
      // is dark text, unreadable on the dark sidebar unless inverted there,
      // and only there: the reader may switch Redoc's mode by hand.
      const logoFilter = () => opened.page.locator('img[alt="redocly logo"]').first().evaluate((element) => getComputedStyle(element).filter);
      expect(await logoFilter()).toBe("invert(1)");
      await opened.page.locator('[data-testid="color-mode-switcher"]').first().click();
      await expect.poll(logoFilter).toBe("none");
      expectStayedOffline(opened);
    } finally {
      await opened.context.close();
    }
  });
});

// Redoc fixes an open menu below its button, from where the button was when
// the menu opened, and measures the menu before it is shown. A button at the
// foot of the viewport (where Playwright's scroll leaves it) puts the menu
// below the fold, where no scroll reaches it: centre the button first.
async function openMenu(section: Locator, shown: RegExp): Promise<void> {
  const button = section.locator('button[aria-haspopup="menu"]').filter({ hasText: shown });
  await button.evaluate((element) => element.scrollIntoView({ block: "center" }));
  await button.click();
}

// The samples of samples/, as the reader picks them on the current page.
describe("the code samples in chromium", () => {
  let opened: OfflinePage | undefined;
  beforeAll(async () => {
    opened = await openOffline(ready().browser, path.join(scratch, "index.html"));
  });
  afterEach(() => expectStayedOffline(opened));
  afterAll(async () => {
    await opened?.context.close();
  });

  it("every operation offers curl, TypeScript and Python, and one with a body its JSON, and shows the one picked", async () => {
    const page = opened!.page;
    await page.getByRole("link", { name: "agents", exact: true }).click();
    for (const { operationId, operation } of contract.operations()) {
      await page.getByRole("link", { name: new RegExp(`^${escapeRegExp(operation.summary as string)}\\b`) }).click();
      const section = page.locator(`[id="agents/${operationId.toLowerCase()}"]`);
      await section.waitFor({ state: "visible", timeout: 20_000 });
      await openMenu(section, /^(curl|TypeScript|Python)$/);
      const payload = operation.requestBody === undefined ? [] : ["Payload"];
      expect(await page.getByRole("menuitem").allInnerTexts(), operationId).toEqual([...LANGUAGES.map((language) => language.lang), ...payload]);
      await page.getByRole("menuitem", { name: "TypeScript", exact: true }).click();
      await expect.poll(() => section.innerText(), { message: operationId }).toContain(`agentd.${operationId}(`);
      if (payload.length > 0) {
        // The body of the example picked above it, which the samples cannot follow.
        await openMenu(section, /^TypeScript$/);
        await page.getByRole("menuitem", { name: "Payload", exact: true }).click();
        const shown = operationId === "pauseAgentByNumber" ? /Payload\s*Pause with a reason\s*\{\s*"reason": "lunch break"\s*\}/ : /Payload[^]*\{\s*\}/;
        await expect.poll(() => section.innerText(), { message: operationId }).toMatch(shown);
        await openMenu(section, /^Payload$/);
        await page.getByRole("menuitem", { name: "TypeScript", exact: true }).click();
      }
      // Leave curl picked, as a reader who comes next finds it.
      await openMenu(section, /^TypeScript$/);
      await page.getByRole("menuitem", { name: "curl", exact: true }).click();
    }
  });

  it("each webhook says it carries no token and links the receivers, which the page shows in both languages", async () => {
    const page = opened!.page;
    await page.getByRole("link", { name: "events", exact: true }).click();
    for (const summary of ["An agent was paused", "An agent was unpaused"]) {
      await page.getByRole("link", { name: new RegExp(`^${summary}\\b`) }).click();
      const section = page.locator("[id^='events/']").filter({ has: page.getByRole("heading", { level: 2, name: summary }) });
      await section.first().waitFor({ state: "visible", timeout: 20_000 });
      expect(await section.first().getByText("View security details").count(), summary).toBe(0);
      expect(await section.first().getByRole("link", { name: "Receiving webhooks" }).count(), summary).toBe(1);
    }
    await page.getByRole("link", { name: "Receiving webhooks" }).first().click();
    await page.getByRole("heading", { level: 3, name: "Receiver (Python)" }).waitFor({ state: "visible" });
    await expect.poll(() => page.getByText("hmac.compare_digest(signature.encode(), expected.encode())").count()).toBeGreaterThan(0);
    await expect.poll(() => page.getByText("webhook.verify(body, req.headers").count()).toBeGreaterThan(0);
  });
});

// Found by a docs reader's walk: the content began some thirty Tab stops in.
describe("the keyboard", () => {
  it("reaches a skip link first, which puts the next Tab in Redoc's content", async () => {
    const opened = await openOffline(ready().browser, path.join(scratch, "index.html"));
    try {
      const page = opened.page;
      await page.locator("main h1").first().waitFor({ state: "visible", timeout: 20_000 });
      await page.keyboard.press("Tab");
      const skip = page.getByRole("button", { name: "Skip to content" });
      await expect.poll(() => skip.evaluate((element) => element === document.activeElement)).toBe(true);
      const box = await skip.boundingBox();
      expect(box !== null && box.x >= 0 && box.y >= 0, "shown once focused").toBe(true);
      await page.keyboard.press("Enter");
      expect(await page.evaluate(() => document.activeElement?.tagName)).toBe("MAIN");
      await page.keyboard.press("Tab");
      expect(await page.evaluate(() => document.querySelector("main")!.contains(document.activeElement) && document.activeElement !== document.querySelector("main"))).toBe(true);
      expectStayedOffline(opened);
    } finally {
      await opened.context.close();
    }
  });
});

// The network check above must be able to fail.
describe("the network check", () => {
  it("catches Redocly's default build, which loads Redoc from its CDN", async () => {
    const { browser } = ready();
    const output = path.join(scratch, "cdn.html");
    // A bare template, so nothing the project adds to its own (a CSP, say)
    // hides the CDN load this check has to see.
    const template = path.join(scratch, "bare.hbs");
    await writeFile(template, "<!DOCTYPE html><html><head>{{{redocHead}}}</head><body>{{{redocHTML}}}</body></html>\n");
    const build = await run(path.join(repoRoot, "node_modules", ".bin", "redocly"), ["build-docs", "openapi.yaml", "-t", template, "-o", output], { cwd: repoRoot });
    expect(build.code, build.stdout + build.stderr).toBe(0);
    const cdn = await openOffline(browser, output);
    try {
      expect(cdn.leaked.some((url) => /^https:\/\/cdn\.redoc(?:ly)?\.(?:com|ly)\//.test(url))).toBe(true);
    } finally {
      await cdn.context.close();
    }
  });

  it("catches images, fetch and WebSockets, and records apart what the page's own CSP refused", async () => {
    const { browser } = ready();
    const leaky = path.join(scratch, "leaky.html");
    await writeFile(
      leaky,
      `<!DOCTYPE html><img src="http://leak.invalid/img.png"><script>
        fetch("https://leak.invalid/fetch").catch(() => {});
        new WebSocket("wss://leak.invalid/ws");
      </script>`,
    );
    const guarded = path.join(scratch, "guarded.html");
    await writeFile(
      guarded,
      `<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="img-src data:">
       <img src="https://leak.invalid/refused.png">`,
    );
    const a = await openOffline(browser, leaky);
    const b = await openOffline(browser, guarded);
    try {
      await expect.poll(() => [...a.leaked].sort()).toEqual([
        "http://leak.invalid/img.png",
        "https://leak.invalid/fetch",
        "wss://leak.invalid/ws",
      ]);
      expect(b.leaked).toEqual([]);
      await expect.poll(() => b.refused.join("\n")).toContain("https://leak.invalid/refused.png");
    } finally {
      await a.context.close();
      await b.context.close();
    }
  });
});
