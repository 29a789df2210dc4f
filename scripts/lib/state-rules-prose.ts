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

/** Rewrites, in place, every schema of `document` whose `allOf` holds only state rules. */
export function stateRulesAsProse(document: Node): void {
  const schemas = isObject(document.components) && isObject(document.components.schemas) ? document.components.schemas : {};
  for (const schema of Object.values(schemas)) {
    if (!isObject(schema) || !Array.isArray(schema.allOf) || schema.allOf.length === 0 || !schema.allOf.every(isRule)) continue;
    const rules = (schema.allOf as { description: string }[]).map((rule) => `- ${rule.description}`);
    delete schema.allOf;
    const description = typeof schema.description === "string" ? `${schema.description.trimEnd()}\n\n` : "";
    schema.description = `${description}State rules:\n\n${rules.join("\n")}\n`;
  }
}
