// What a webhook receiver said when it did not take an event: the start of
// its answer's body, on one line, for the log and for `agentd events list
// --sink` (the event's last_error). A receiver that refuses an event
// usually says why there, and the operator deciding whether to drop the
// event reads it.
//
// The body is the receiver's text, so it is treated as untrusted: control
// characters go, and what could be a secret of the URL goes too. The log
// shows a webhook's URL without its query (sinkLogName), since the query
// may carry the receiver's secret; a receiver may echo the URL it was
// asked, re-encoded or escaped, so every query string in the excerpt is
// masked whole, and so is each query value of the configured URL wherever
// it stands, in the forms a receiver would write it.

import { escapeRegExp } from "../escape-regexp.js";

/** The most of the answer kept, in characters: the receiver's reason, not its whole page. */
export const EXCERPT_LENGTH = 200;
/** The bytes decoded for it: more than the excerpt, so that a secret is masked whole before the cut. */
const DECODED_BYTES = 4 * 1024;
/** Read (and dropped) past those so the connection is kept; a longer answer closes it instead. */
const READ_BYTES = 64 * 1024;
/** A query value shorter than this is masked only inside a query string: masked everywhere, `?v=1` would mask every 1. */
const FREE_STANDING_SECRET = 6;

/** A query string as text may carry it: from `?` to a blank, a quote or a bracket. */
const QUERY_STRING = /\?[^\s"'<>()[\]{}]+/g;
// eslint-disable-next-line no-control-regex -- control characters are what this removes
const CONTROL_OR_BLANK = /[\u0000-\u001f\u007f-\u009f\s]+/g;

/**
 * The query values of `url` in the forms a receiver may echo them: as sent,
 * decoded, encoded again (percent and form encoding), JSON-escaped (with
 * and without `\/`); longest
 * first, so that a value is masked whole. Only those of FREE_STANDING_SECRET
 * characters or more: shorter ones are masked with their query string.
 */
export function urlSecrets(url: URL): string[] {
  const sent = url.search
    .slice(1)
    .split("&")
    .map((pair) => pair.slice(pair.indexOf("=") + 1));
  const decoded = [...url.searchParams.values()];
  const forms = [
    ...sent,
    ...decoded.flatMap((value) => [
      value,
      encodeURIComponent(value),
      new URLSearchParams({ v: value }).toString().slice(2),
      JSON.stringify(value).slice(1, -1),
      // As PHP's json_encode writes it.
      JSON.stringify(value).slice(1, -1).replaceAll("/", "\\/"),
    ]),
  ];
  return [...new Set(forms)].filter((value) => value.length >= FREE_STANDING_SECRET).sort((a, b) => b.length - a.length);
}

/**
 * The start of `body` on one line, masked (above): at most EXCERPT_LENGTH
 * characters. The rest of an ordinary answer is read and dropped, keeping
 * the connection; past READ_BYTES the read stops, which closes it. Never
 * throws: a body cut short gives what came.
 */
export async function answerExcerpt(body: AsyncIterable<Buffer>, secrets: readonly string[]): Promise<string> {
  const kept: Buffer[] = [];
  let read = 0;
  try {
    for await (const chunk of body) {
      if (read < DECODED_BYTES) kept.push(chunk.subarray(0, DECODED_BYTES - read));
      read += chunk.length;
      if (read >= READ_BYTES) break;
    }
  } catch {
    // An answer cut short still has its status: that is the failure.
  }
  return excerpt(new TextDecoder().decode(Buffer.concat(kept), { stream: true }), read > DECODED_BYTES, secrets);
}

/** The excerpt of the decoded text; `truncated`: the text stops where the body went on, maybe inside a secret. */
export function excerpt(decoded: string, truncated: boolean, secrets: readonly string[]): string {
  // NUL first: a UTF-16 body read as UTF-8 has one between every letter.
  // eslint-disable-next-line no-control-regex -- NUL is what this removes
  let text = decoded.replace(/\u0000/g, "");
  // A secret cut at the end of what was decoded would not match whole: its start goes with it.
  if (truncated) text = text.slice(0, Math.max(0, text.length - Math.max(0, ...secrets.map((secret) => secret.length - 1))));
  text = text.replace(QUERY_STRING, "?…");
  for (const secret of secrets) text = text.replace(new RegExp(escapeRegExp(secret), "gi"), "…");
  const line = text.replace(CONTROL_OR_BLANK, " ").trim();
  return Array.from(line).slice(0, EXCERPT_LENGTH).join("").trimEnd();
}
