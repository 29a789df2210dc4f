// For the docs site only: every description's paragraphs on one line each.
// The contract's prose is wrapped at about 75 columns, and Redoc's search
// index drops the line breaks, so its result excerpts ran the words at each
// break together ("Pausing anagent"). Prettier's Markdown printer with
// `proseWrap: "never"` joins each paragraph's lines and renders the same
// (lists, tables, headings and HTML comments stay blocks; code blocks are
// left as they are). The contract and every release view keep their text.
import { format } from "prettier";
import { isObject } from "../../plugins/release-view.js";

type Node = Record<string, unknown>;

/** `markdown` with each paragraph on one line, and what it renders to unchanged. */
function unwrappedMarkdown(markdown: string): Promise<string> {
  return format(markdown, { parser: "markdown", proseWrap: "never", embeddedLanguageFormatting: "off" });
}

/** Keys whose values are data (an example, a default), not the document's own objects. */
const DATA = new Set(["value", "example", "default", "const", "enum"]);

/** Rewrites, in place, every `description` string of `document` (the keyword, not a property named so, nor data). */
export async function unwrapDescriptions(document: Node): Promise<void> {
  const pending: Promise<void>[] = [];
  const visit = (node: unknown, underProperties: boolean): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item, false);
      return;
    }
    if (!isObject(node)) return;
    for (const [key, value] of Object.entries(node)) {
      if (!underProperties && key === "description" && typeof value === "string") {
        pending.push(unwrappedMarkdown(value).then((text) => void (node[key] = text)));
      } else if (underProperties || !DATA.has(key)) {
        visit(value, !underProperties && key === "properties");
      }
    }
  };
  visit(document, false);
  await Promise.all(pending);
}
