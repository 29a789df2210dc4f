// COPY's text format (PostgreSQL, "COPY … File Formats"): one line per row,
// columns separated by a tab, NULL as \N, and in a value a backslash, a
// newline, a carriage return or a tab written as a backslash sequence. Those
// four are all the format reserves, so any other character goes as it is.
export type CopyValue = string | number | boolean | null;

const RESERVED = /[\\\n\r\t]/;
const RESERVED_ALL = /[\\\n\r\t]/g;
const ESCAPES: Record<string, string> = { "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function field(value: CopyValue): string {
  if (value === null) return "\\N";
  if (typeof value !== "string") return String(value);
  // Most values hold none of the four: test before paying for a replace.
  return RESERVED.test(value) ? value.replace(RESERVED_ALL, (char) => ESCAPES[char]!) : value;
}

/** The rows as COPY FROM reads them in its default text format: each row's `columns`, in that order. */
export function copyText<K extends string>(rows: Iterable<Readonly<Record<K, CopyValue>>>, columns: readonly K[]): string {
  // Appended field by field: no array per row, which a 100,000-agent import
  // would otherwise allocate twice per agent.
  const last = columns.length - 1;
  let text = "";
  for (const row of rows) {
    for (let i = 0; i < last; i++) text += field(row[columns[i]!]) + "\t";
    text += field(row[columns[last]!]) + "\n";
  }
  return text;
}
