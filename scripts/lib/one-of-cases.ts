// For the docs site only: what Redoc shows of a `oneOf` field's cases.
// Redoc draws such a field as tabs, one per case, each with the case's own
// description; the field's own, and the "Since release" note the release
// view adds to it, are never shown (Redocly/redoc#927, #752). So a field
// whose schema is a `oneOf` with a description of its own (`paused_reason`:
// a reason, or null) shows that description on each of its cases. And
// Redoc names the field's type after its cases' types, so cases that are
// the values of a typed field (the 503's `error`: a `const` each) get that
// type, without which the field reads "any". The contract and every
// release view keep the schema as it is.

import { isObject } from "../../plugins/release-view.js";

type Node = Record<string, unknown>;

/**
 * Rewrites, in place, every `oneOf` of `document`: with a type, each
 * `const` case without one gets it; with a description, each case gets
 * that description, followed by its own. A case that is a `$ref` to a
 * schema component becomes a copy of that schema, titled with its name so
 * that its tab keeps it.
 */
export function oneOfFieldOnCases(document: Node): void {
  const schemas = isObject(document.components) && isObject(document.components.schemas) ? document.components.schemas : {};
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (!isObject(node)) return;
    for (const value of Object.values(node)) visit(value);
    if (!Array.isArray(node.oneOf)) return;
    const type = node.type;
    const cases: unknown[] =
      typeof type === "string" ? node.oneOf.map((branch: unknown) => (isObject(branch) && "const" in branch && branch.type === undefined && isOfType(branch.const, type) ? { type, ...branch } : branch)) : node.oneOf;
    node.oneOf = cases;
    if (typeof node.description !== "string") return;
    const shared = node.description.trimEnd();
    node.oneOf = cases.map((branch) => {
      const name = isObject(branch) && typeof branch.$ref === "string" ? /^#\/components\/schemas\/([^/]+)$/.exec(branch.$ref)?.[1] : undefined;
      const target = name === undefined ? branch : schemas[name];
      if (!isObject(target)) return branch;
      const own = typeof target.description === "string" ? `\n\n${target.description.trim()}` : "";
      return { ...target, ...(name === undefined ? {} : { title: target.title ?? name }), description: `${shared}${own}` };
    });
  };
  visit(document);
}

/** Whether a constant is a value of a JSON Schema type. */
function isOfType(value: unknown, type: string): boolean {
  switch (type) {
    case "null":
      return value === null;
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number";
    case "array":
      return Array.isArray(value);
    case "object":
      return isObject(value);
    default:
      return typeof value === type;
  }
}
