// Whether parsed JSON holds only well-formed Unicode. JSON may escape a lone
// UTF-16 surrogate (`"\ud800"`), which is no text at all: PostgreSQL would
// store it as U+FFFD while this process still held the original, so the
// answers would change after a restart. The API (http/well-formed-body.ts)
// and `agentd import` (store/agent-import-reader.ts) refuse it.

import { pointerSegment } from "./json-pointer.js";

interface Visit {
  value: unknown;
  key: string;
  parent: Visit | null;
}

/** The JSON pointer of a visit, built only for the one that is reported. */
function pointerOf(visit: Visit): string {
  const keys: string[] = [];
  for (let at: Visit | null = visit; at?.parent; at = at.parent) keys.push(pointerSegment(at.key));
  return keys.reverse().map((key) => `/${key}`).join("");
}

/**
 * The first string in a parsed JSON body (a value or a key) that is not
 * well-formed Unicode, as a JSON pointer; null when there is none. Walked
 * with a stack of its own, not by recursion: a body may nest as deep as
 * its size allows, deeper than the call stack.
 */
export function firstIllFormed(body: unknown): string | null {
  const stack: Visit[] = [{ value: body, key: "", parent: null }];
  for (let visit = stack.pop(); visit !== undefined; visit = stack.pop()) {
    const { value } = visit;
    if (typeof value === "string") {
      if (!value.isWellFormed()) return pointerOf(visit);
    } else if (value !== null && typeof value === "object") {
      for (const [key, item] of Object.entries(value as Record<string, unknown>).reverse()) {
        const child: Visit = { value: item, key, parent: visit };
        if (!key.isWellFormed()) return pointerOf(child);
        stack.push(child);
      }
    }
  }
  return null;
}
