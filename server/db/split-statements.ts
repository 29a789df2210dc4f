// A SQL script cut into single statements, for a driver that runs one
// statement at a time (PGlite's query()). It knows just enough SQL to find
// where a statement ends: at a `;` outside a comment (`--`, `/* */`), a
// quoted string or name ('…', "…") and a dollar-quoted body ($$…$$,
// $tag$…$tag$), so a function body's own `;` stays inside it. The comments
// before a statement are left out; those inside it stay.

const DOLLAR_TAG = /\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/y;
const NAME_CHAR = /[A-Za-z0-9_$]/;
const LEADING_COMMENTS = /^(?:\s*(?:--[^\n]*|\/\*[\s\S]*?\*\/))*/;

/** Where the text closed by `closing` from `from` ends; a script that never closes it is refused. */
function endOf(script: string, closing: string, from: number, what: string): number {
  const at = script.indexOf(closing, from);
  if (at === -1) throw new Error(`unterminated ${what} in SQL script`);
  return at + closing.length;
}

export function splitStatements(script: string): string[] {
  const statements: string[] = [];
  let start = 0;
  const push = (end: number) => {
    const statement = script.slice(start, end).replace(LEADING_COMMENTS, "").trim();
    if (statement !== "") statements.push(statement);
  };
  for (let i = 0; i < script.length; ) {
    const char = script[i]!;
    if (char === ";") {
      push(i);
      start = ++i;
    } else if (script.startsWith("--", i)) {
      const newline = script.indexOf("\n", i);
      i = newline === -1 ? script.length : newline + 1;
    } else if (script.startsWith("/*", i)) {
      i = endOf(script, "*/", i + 2, "comment");
    } else if (char === "'" || char === '"') {
      // A doubled quote inside ('it''s') reads as two strings back to back: the same for finding the end.
      i = endOf(script, char, i + 1, "quoted text");
    } else {
      DOLLAR_TAG.lastIndex = i;
      const tag = char === "$" && !NAME_CHAR.test(script[i - 1] ?? "") ? DOLLAR_TAG.exec(script)?.[0] : undefined;
      i = tag === undefined ? i + 1 : endOf(script, tag, i + tag.length, `${tag} body`);
    }
  }
  push(script.length);
  return statements;
}
