// The `agentd/release-links` decorator, for the current contract's docs page:
// appends to info.description a "Releases" section linking each published
// release's page (docs/releases/<release>.html, written by `npm run docs`)
// and the changelog generated from the published releases
// (releases/CHANGELOG.md, written by `npm run release`).
//
//   decorators:
//     agentd/release-links: on
import { existsSync, readFileSync } from "node:fs";
import { listedReleases } from "./releases.js";

const releasesDir = new URL("../releases/", import.meta.url);

export function ReleaseLinks() {
  return {
    Root: {
      /** @param {{ info: { description?: string } }} root */
      leave(root) {
        const published = listedReleases(root).filter((release) => existsSync(new URL(`openapi-${release}.yaml`, releasesDir)));
        if (published.length === 0) return;
        const links = published.map((release) => `[${release}](releases/${release}.html)`).join(" · ");
        const changelogFile = new URL("CHANGELOG.md", releasesDir);
        const changelog = existsSync(changelogFile) ? readFileSync(changelogFile, "utf8") : "";
        root.info.description =
          `${String(root.info.description ?? "").trimEnd()}\n\n` +
          "## Releases\n\n" +
          `Each published release has a page of its own, showing its contract as frozen in \`releases/\` (the page's release bar links the file itself): ${links}.\n` +
          (changelog === "" ? "" : `\n${changelogSection(changelog)}`);
      },
    },
  };
}

/** The changelog file's line for its maintainers (scripts/lib/changelog.ts writes it), left off the page. */
export const CHANGELOG_MAINTAINERS_NOTE = "Do not edit by hand.";

/**
 * The changelog file as a section of the page: its title becomes a level-2
 * heading and each release a level-3 one, "Changes in <release>" (sidebar
 * entries, which a bare release number would confuse with the release
 * switcher's links to the release pages); the operations under a release
 * become bold lines, so the sidebar lists releases, not every operation of
 * every release.
 * @param {string} markdown
 */
function changelogSection(markdown) {
  return markdown
    .split("\n")
    // A note to the maintainers of the file, not to the page's readers.
    .filter((line) => line.trim() !== CHANGELOG_MAINTAINERS_NOTE)
    .map((line) => {
      const heading = /^(#{1,6}) (.*)$/.exec(line);
      if (heading === null) return line;
      const level = /** @type {string} */ (heading[1]).length + 1;
      if (level === 3) return `### Changes in ${heading[2]}`;
      return level < 3 ? `${"#".repeat(level)} ${heading[2]}` : `**${heading[2]}**`;
    })
    .join("\n")
    .trimEnd()
    .concat("\n");
}
