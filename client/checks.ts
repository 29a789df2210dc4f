// What the client and agentctl check in the options they are given, before
// any request: each problem found here would otherwise surface as a bare
// TypeError from fetch (a URL it cannot parse, a header value it cannot send)
// or as a misleading failure much later.

/**
 * Why `baseUrl` cannot be used as the client's base URL, or `undefined` when
 * it can. A relative one (`/1.0`) is taken where there is a document to
 * resolve it against (a page, as fetch does there), never in Node.
 */
export function baseUrlProblem(baseUrl: string, documentUrl: string | undefined = pageUrl()): string | undefined {
  // Only a path is taken as relative: `agentd.example.com/1.0` is a host without its scheme.
  const relative = baseUrl.startsWith("/") && !baseUrl.startsWith("//");
  let url: URL;
  try {
    url = new URL(baseUrl, relative ? documentUrl : undefined);
  } catch {
    return "is not an absolute URL (such as https://localhost:9493/1.0)";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return `has the scheme ${url.protocol} where https: (or http:, for the mocks) is expected`;
  // fetch refuses a URL with credentials (a bare TypeError that repeats
  // them); the service reads only its token.
  if (url.username !== "" || url.password !== "") return "holds a user name or password, which the service does not read: it takes only a token";
  // The operations' paths are appended to the base URL: after a query or a fragment, they would be part of it.
  if (url.search !== "" || url.hash !== "" || baseUrl.includes("?") || baseUrl.includes("#")) return "has a query or a fragment (? or #), after which the operations' paths cannot be appended";
  return undefined;
}

/** The page's URL in a browser; undefined elsewhere (Deno without --location throws on reading it). */
function pageUrl(): string | undefined {
  try {
    return (globalThis as { location?: { href?: string } }).location?.href;
  } catch {
    return undefined;
  }
}

/**
 * Why `token` cannot be sent as the `X-Auth-Token` header, or `undefined`
 * when it can. The service's tokens are printable ASCII without spaces; a
 * character outside that range is a copying mistake (an ellipsis from a
 * shortened display, a space), which fetch would either refuse with a
 * TypeError or send altered. Whitespace around it (the line break ending a
 * token file) is not counted: fetch drops it, as the caller should (the
 * client trims the token). The message never repeats the token.
 */
export function tokenProblem(token: string): string | undefined {
  const bad = /[^\x21-\x7e]/u.exec(token.trim());
  if (bad === null) return undefined;
  const code = bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
  return `holds a character a token cannot hold (U+${code} at position ${bad.index + 1}): a token is printable ASCII without spaces, pasted whole`;
}
