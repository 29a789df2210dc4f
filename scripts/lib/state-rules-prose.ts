// For the docs site only: a schema's state rules (an `allOf` of `if`/`then`
// members, each with its description) become a list in the schema's
// description. Redoc draws such rules as "One of: case 1 / case 2" tabs
// whose first case shows fields as fixed values (`paused: false`), which
// reads as if every agent looked like that; the fields' own descriptions
// already say each rule where a reader looks. The contract itself, and every
// release view the gate compares, keep the rules as they are.

import { isObject } from "../../plugins/release-view.js";

type Node = Record<string, unknown>;

/** Whether `member` of an `allOf` is a state rule: an `if` with its `then`, and a description saying it. */
function isRule(member: unknown): member is Node & { description: string } {
  return isObject(member) && "if" in member && "then" in member && typeof member.description === "string";
}

/**
 * Rewrites, in place, every schema of `document` whose `allOf` holds only
 * state rules. Redoc draws no description of a response's schema itself,
 * so the list also goes into the description of every response whose body
 * is that schema or a list of it.
 */
export function stateRulesAsProse(document: Node): void {
  const schemas = isObject(document.components) && isObject(document.components.schemas) ? document.components.schemas : {};
  for (const [name, schema] of Object.entries(schemas)) {
    if (!isObject(schema) || !Array.isArray(schema.allOf) || schema.allOf.length === 0 || !schema.allOf.every(isRule)) continue;
    // One line per rule: a rule's paragraphs (its "Since release" note) would otherwise leave the list.
    const items = (schema.allOf as { description: string }[]).map((rule) => `- ${rule.description.trim().replace(/\s*\n\s*/g, " ")}`);
    const rules = `State rules:\n\n${items.join("\n")}\n`;
    delete schema.allOf;
    schema.description = appended(schema.description, rules);
    for (const response of responsesOf(document, `#/components/schemas/${name}`)) response.description = appended(response.description, rules);
  }
}

function appended(description: unknown, text: string): string {
  return typeof description === "string" ? `${description.trimEnd()}\n\n${text}` : text;
}

/** Every response object (shared, or an operation's own) whose JSON body is `ref` or an array of it. */
function responsesOf(document: Node, ref: string): Node[] {
  const components = isObject(document.components) && isObject(document.components.responses) ? Object.values(document.components.responses) : [];
  const inline = Object.values(isObject(document.paths) ? document.paths : {})
    .flatMap((item) => (isObject(item) ? Object.values(item) : []))
    .flatMap((operation) => (isObject(operation) && isObject(operation.responses) ? Object.values(operation.responses) : []));
  return [...components, ...inline].filter((response): response is Node => {
    if (!isObject(response) || !isObject(response.content)) return false;
    const media = response.content["application/json"];
    const schema = isObject(media) ? media.schema : undefined;
    if (!isObject(schema)) return false;
    return schema.$ref === ref || (schema.type === "array" && isObject(schema.items) && schema.items.$ref === ref);
  });
}
