// Text from the service shown in a terminal. A pause reason is stored as a
// supervisor sent it, so it may hold escape sequences, carriage returns or
// bidirectional overrides that would recolour, rewrite or reorder what
// another operator sees: printed, each such character is written as an
// escape instead. The API and `--json`'s values keep the text as stored.

/**
 * DEL and the C1 control characters (the 8-bit CSI…), the bidirectional
 * marks, embeddings, overrides and isolates, and the Unicode line and
 * paragraph separators: what JSON.stringify leaves raw in a string.
 */
const BEYOND_C0 = "\\u007f-\\u009f\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069";

/** BEYOND_C0 and the C0 controls (ESC, CR, LF…). */
const UNSAFE = new RegExp(`[\\u0000-\\u001f${BEYOND_C0}]`, "g");

/** In JSON text, C0 stands only as JSON's own layout (new lines): JSON.stringify escapes it in strings. */
const UNSAFE_IN_JSON = new RegExp(`[${BEYOND_C0}]`, "g");

const escaped = (char: string): string => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;

/** For a table or a message: every unsafe character as `\uXXXX`. */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, escaped);
}

/**
 * For JSON output: JSON.stringify escapes C0 controls itself, not DEL, C1
 * or the bidirectional characters. They can only stand inside strings, and
 * a `\uXXXX` escape there is the same value, so the JSON still parses to
 * exactly what the service answered.
 */
export function terminalSafeJson(json: string): string {
  return json.replace(UNSAFE_IN_JSON, escaped);
}
