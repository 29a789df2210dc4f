// What a request asks a mock to force (a status, an example, a random
// body), read as Prism reads it (prism-http-server's
// getHttpConfigFromRequest): the `Prefer` header, parsed by the same
// library, or, only when there is no `Prefer` header, the `__code`,
// `__example` and `__dynamic` query parameters. The front door and the
// stateful mock's service both read it here, so the three agree on what a
// request asked for.
import parsePreferHeader from "parse-prefer-header";

export interface Forcing {
  code: string | true | undefined;
  example: string | true | undefined;
  dynamic: string | true | undefined;
  /** Where the request asked, to name it in an error: the header, or the query parameter of that preference. */
  askedIn: "header" | "query";
}

/**
 * What `prefer` (the `Prefer` header as Prism gets it) or else the query of
 * `url` forces, or null when it forces nothing.
 */
export function forcing(prefer: string | undefined, url: string): Forcing | null {
  if (prefer) {
    const { code, example, dynamic } = parsePreferHeader(prefer);
    return code === undefined && example === undefined && dynamic === undefined ? null : { code, example, dynamic, askedIn: "header" };
  }
  const query = new URL(url, "http://mock.invalid").searchParams;
  const [code, example, dynamic] = QUERY_FORMS.map((name) => query.get(name) ?? undefined);
  return code === undefined && example === undefined && dynamic === undefined ? null : { code, example, dynamic, askedIn: "query" };
}

/** Prism's query forms of `Prefer`'s code, example and dynamic. */
const QUERY_FORMS = ["__code", "__example", "__dynamic"];

/** `url` without Prism's query forms: they are the mock's, not parameters of the operation. */
export function withoutQueryForms(url: string): string {
  const at = url.indexOf("?");
  if (at < 0) return url;
  const query = new URLSearchParams(url.slice(at + 1));
  if (!QUERY_FORMS.some((name) => query.has(name))) return url;
  for (const name of QUERY_FORMS) query.delete(name);
  const rest = query.toString();
  return url.slice(0, at) + (rest === "" ? "" : `?${rest}`);
}
