// The `agentd/release-markers` lint rule: the version history is one list,
// info.x-releases (quoted release numbers, oldest first), and every `x-since`
// or `x-until` names one of its releases, as a quoted string (an unquoted
// 15.10 is the number 15.1 to YAML); so does every marker line of a
// description (`<!-- x-since: "15.19" -->`, under a heading of
// info.description or at the start of a paragraph).
import { descriptionMarkerProblems } from "./release-view.js";
import { compareReleases, isRelease } from "./releases.js";

/**
 * The part of Redocly's context of a rule's visitor that this rule uses.
 * @typedef {{ child(path: (string | number)[]): Location }} Location
 * @typedef {{ report(problem: { message: string, location: Location }): void, location: Location }} Context
 */

export function ReleaseMarkers() {
  /** @type {string[]} */
  let releases = [];
  return {
    Root: {
      /** @param {{ info?: { "x-releases"?: unknown } }} root @param {Context} ctx */
      enter(root, ctx) {
        const listed = root.info?.["x-releases"];
        if (!Array.isArray(listed) || listed.length === 0) {
          ctx.report({ message: "info.x-releases must list the releases of the version history.", location: ctx.location.child(["info"]) });
          releases = [];
          return;
        }
        releases = listed.filter(isRelease);
        listed.forEach((/** @type {unknown} */ release, index) => {
          const at = ctx.location.child(["info", "x-releases", index]);
          /** @type {unknown} */
          const previous = listed[index - 1];
          if (!isRelease(release)) ctx.report({ message: `Release ${JSON.stringify(release)} is not a quoted release number such as "15.18".`, location: at });
          else if (index > 0 && isRelease(previous) && compareReleases(previous, release) >= 0) {
            ctx.report({ message: `Release ${release} is listed after ${previous}: list them oldest first.`, location: at });
          }
        });
      },
    },
    any: {
      /** @param {unknown} node @param {Context} ctx */
      enter(node, ctx) {
        if (node === null || typeof node !== "object" || Array.isArray(node)) return;
        const description = /** @type {Record<string, unknown>} */ (node).description;
        if (typeof description === "string") {
          for (const problem of descriptionMarkerProblems(description, releases)) {
            ctx.report({ message: `The marker ${problem}.`, location: ctx.location.child(["description"]) });
          }
        }
        for (const marker of ["x-since", "x-until"]) {
          if (!(marker in node)) continue;
          const value = /** @type {Record<string, unknown>} */ (node)[marker];
          if (!isRelease(value)) {
            ctx.report({ message: `${marker} must be a quoted release number such as "15.18", not ${JSON.stringify(value)}.`, location: ctx.location.child([marker]) });
          } else if (!releases.includes(value)) {
            ctx.report({ message: `${marker} "${value}" is not a release of info.x-releases (${releases.join(", ")}).`, location: ctx.location.child([marker]) });
          }
        }
      },
    },
  };
}
