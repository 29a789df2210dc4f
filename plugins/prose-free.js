// The `agentd/prose-free` decorator: the contract without its prose, for the
// check that a published release is still what the contract derives
// (npm run contract:gate). Descriptions, summaries, titles and the wording
// (text and numbers) of examples go; what a client relies on stays: paths,
// operations, parameters, schemas and their constraints, security, servers,
// responses, the names and shapes of examples, and extensions such as
// x-required-acl. Fixing a typo therefore changes no release.
import { isObject } from "./release-view.js";

/**
 * Example values keep their structure, their types and their flags (a
 * `paused: true` is what the `paused` example shows); their text and
 * numbers (an id, a number) are illustration.
 * @param {unknown} value
 * @returns {unknown}
 */
function withoutWording(value) {
  if (typeof value === "string") return "";
  if (typeof value === "number") return 0;
  if (Array.isArray(value)) return value.map(withoutWording);
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withoutWording(item)]));
  return value;
}

/**
 * Deletes `node[key]` when it is prose (a string). A property map
 * (`properties`, a schema's named fields) may hold a field called
 * `description` or `summary`, whose value is a schema: that one is part of the
 * contract and stays.
 * @param {Record<string, unknown>} node
 * @param {string} key
 */
function dropProse(node, key) {
  if (typeof node[key] === "string") delete node[key];
}

export function ProseFree() {
  return {
    // A `$ref` with siblings (a property's own description next to its shared schema).
    ref: {
      /** @param {Record<string, unknown>} node */
      enter(node) {
        dropProse(node, "description");
        dropProse(node, "summary");
      },
    },
    any: {
      /** @param {unknown} node @param {{ type: { name: string } }} ctx */
      enter(node, ctx) {
        if (!isObject(node)) return;
        dropProse(node, "description");
        dropProse(node, "summary");
        // Presentation only: the badges release-view derives from x-since.
        delete node["x-badges"];
        const type = ctx.type.name;
        if (type === "Info" || type === "Schema") dropProse(node, "title");
        if (type === "Info") delete node.contact;
        if (type === "Example" && "value" in node) node.value = withoutWording(node.value);
        if ((type === "MediaType" || type === "Parameter" || type === "Header" || type === "Schema") && "example" in node) {
          node.example = withoutWording(node.example);
        }
        if (type === "Schema" && Array.isArray(node.examples)) node.examples = node.examples.map(withoutWording);
      },
    },
  };
}
