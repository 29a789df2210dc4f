/**
 * A URL as an operator is shown it, in a banner or an error: the password
 * as `***`, and the query as `?…`, since it may hold a secret too (pg
 * reads `?password=`). The URL must parse; the configuration checked it.
 */
export function shownUrl(raw: string): string {
  const shown = new URL(raw);
  if (shown.password !== "") shown.password = "***";
  const query = shown.search === "" ? "" : "?…";
  shown.search = "";
  return `${shown.href}${query}`;
}
