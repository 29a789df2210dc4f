// For the docs site only: a field whose schema is a `oneOf` with a
// description of its own (`paused_reason`: a reason, or null) shows that
// description on each of its cases. Redoc draws such a field as tabs, one per
// case, each with the case's own description; the field's own, and the
// "Since release" note the release view adds to it, are never shown
// (Redocly/redoc#927, #752). The contract and every release view keep the
// schema as it is.

import { isObject } from "../../plugins/release-view.js";

type Node = Record<string, unknown>;

/**
 * Rewrites, in place, every `oneOf` of `document` that has a description:
 * each case gets that description, followed by its own. A case that is a
 * `$ref` to a schema component becomes a copy of that schema, titled with
 * its name so that its tab keeps it.
 */
export function oneOfDescriptionsOnCases(document: Node): void {
  const schemas = isObject(document.components) && isObject(document.components.schemas) ? document.components.schemas : {};
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (!isObject(node)) return;
    for (const value of Object.values(node)) visit(value);
    if (!Array.isArray(node.oneOf) || typeof node.description !== "string") return;
    const shared = node.description.trimEnd();
    node.oneOf = node.oneOf.map((branch: unknown) => {
      const name = isObject(branch) && typeof branch.$ref === "string" ? /^#\/components\/schemas\/([^/]+)$/.exec(branch.$ref)?.[1] : undefined;
      const target = name === undefined ? branch : schemas[name];
      if (!isObject(target)) return branch;
      const own = typeof target.description === "string" ? `\n\n${target.description.trim()}` : "";
      return { ...target, ...(name === undefined ? {} : { title: target.title ?? name }), description: `${shared}${own}` };
    });
  };
  visit(document);
}
