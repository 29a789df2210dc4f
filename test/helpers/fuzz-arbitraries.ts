// Generators for the bad-input fuzzer (test/fuzz.test.ts). They produce
// small, printable *descriptions* of requests (so fast-check's counterexample
// stays readable even for a 1 MiB body); `render` turns one into the exact
// bytes sent on the wire.
import fc from "fast-check";
import { BASE_PATH } from "../../server/contract.js";
import { suiteAgents } from "./agents.js";
import { requestBytes, type RawRequest } from "./raw-https.js";

/** Which credential a request carries; the fuzzer maps names to real tokens. */
export type TokenName = "admin" | "reader" | "pauser" | "revoked";

export type TokenSpec =
  | { kind: "none" }
  | { kind: "named"; name: TokenName }
  | { kind: "literal"; value: string }
  | { kind: "huge"; size: number }
  | { kind: "duplicate"; names: TokenName[] };

export type BodySpec =
  | { kind: "none" }
  | { kind: "json"; value: unknown }
  | { kind: "text"; text: string }
  | { kind: "bytes"; bytes: number[] }
  | { kind: "big"; size: number; asString: boolean }
  | { kind: "deep"; depth: number; objects: boolean };

export interface RequestSpec {
  method: string;
  /** Request target exactly as written on the request line (already encoded, or deliberately not). */
  target: string;
  token: TokenSpec;
  contentTypes: string[];
  /** How the body is framed: Content-Length or chunked. */
  chunked: boolean;
  extraHeaders: Array<[string, string]>;
  body: BodySpec;
}

/** The fuzzed server's agents (it loads suiteAgents()), by state: only the logged-in ones can be paused or unpaused. */
export const LOGGED_IN: readonly string[] = suiteAgents().filter((a) => a.logged).map((a) => a.number);
export const LOGGED_OUT: readonly string[] = suiteAgents().filter((a) => !a.logged).map((a) => a.number);
export const UNKNOWN_NUMBERS = ["9999", "1000", "01001", "0"] as const;

const METHODS = ["GET", "GET", "GET", "POST", "POST", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"];
// Methods Node's HTTP parser knows and hands to the application.
const ODD_METHODS = ["TRACE", "PROPFIND", "MKCOL", "COPY", "MOVE", "LOCK", "SEARCH", "PURGE", "REPORT", "QUERY", "LINK", "NOTIFY", "M-SEARCH"];

/** Percent-encodes every byte of a string, hostile or not. */
const encodeAll = (s: string): string => [...Buffer.from(s, "utf8")].map((b) => "%" + b.toString(16).padStart(2, "0").toUpperCase()).join("");
/** encodeURIComponent that tolerates lone surrogates (they become U+FFFD, as in any UTF-8 encoder). */
const encodeLoose = (s: string): string => encodeURIComponent(s.replace(/\p{Cs}/gu, "\ufffd"));

/** Hostile values for a path parameter, already written as they go on the wire. */
export const pathValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "", ".", "..", "%2e%2e", "%00", "1%00", "%2F", "1001%2F", "%2F..%2F", "%", "%ZZ", "%E0%A4%A", "%C0%AF", "%FF",
    "-1", "-0", "0", "00", "1.5", "1e3", "0x10", "+1", "%201", "1%20", "NaN", "Infinity", "null", "true", "[]", "{}",
    "2147483647", "2147483648", "-2147483649", "4294967296", "9007199254740993",
    "%31%30%30%31", "1001;x", "1001,1003", "1001*", "*", "#", "agentd", "1001.read", "a.b.c", "~", "'", "%22%3E%3Cscript%3E",
  ),
  ...[...LOGGED_IN, ...LOGGED_OUT, ...UNKNOWN_NUMBERS].map((n) => fc.constant(n)),
  fc.integer().map(String),
  fc.double({ noNaN: false }).map(String).map(encodeLoose),
  fc.bigInt({ min: -(10n ** 60n), max: 10n ** 60n }).map(String),
  fc.stringMatching(/^[0-9]{30,60}$/),
  // Longer than any limit, yet within Node's 16 KiB request head (with a huge token).
  fc.nat({ max: 3000 }).map((n) => "9".repeat(n + 41)),
  fc.string({ unit: "binary", maxLength: 30 }).map(encodeLoose),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 10 }).map(encodeAll),
  fc.string({ unit: fc.constantFrom(..."0123456789.-+eE%/"), maxLength: 12 }),
);

const segment: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("agents", "by-id", "by-number", "pause", "unpause", BASE_PATH.slice(1), "1.1", "v1", "", ".", "..", "admin", "health", "openapi.yaml", "%2e", "AGENTS", "Agents"),
  pathValue,
);

const query: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constant("") },
  fc.constantFrom("?", "?x", "?x=1", "?token=t", "?agent_id=1", "?%ZZ=1", "?a=%00", "?a[b]=1", "?a=1&a=2", "?" + "q=1&".repeat(500), "#frag"),
  fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 })).map(([k, v]) => `?${encodeLoose(k)}=${encodeLoose(v)}`),
);

/** Request targets: the contract's routes with hostile values, and routes off the contract. */
export const target = (value: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.tuple(fc.constantFrom(`${BASE_PATH}/agents`, `${BASE_PATH}/agents/`, `${BASE_PATH}//agents`, `/${BASE_PATH}/agents`, `${BASE_PATH}/agents//`, `${BASE_PATH}/Agents`, `${BASE_PATH}/agents/.`, `${BASE_PATH}/./agents`), query).map(([p, q]) => p + q) },
    { weight: 4, arbitrary: fc.tuple(value, fc.constantFrom("", "/", "//"), query).map(([v, tail, q]) => `${BASE_PATH}/agents/by-id/${v}${tail}${q}`) },
    { weight: 4, arbitrary: fc.tuple(value, fc.constantFrom("", "/", "//"), query).map(([v, tail, q]) => `${BASE_PATH}/agents/by-number/${v}${tail}${q}`) },
    { weight: 8, arbitrary: fc.tuple(value, fc.constantFrom("/pause", "/pause/", "//pause", "/pause/x", "/PAUSE", "/paus", "/pause/.."), query).map(([v, tail, q]) => `${BASE_PATH}/agents/by-number/${v}${tail}${q}`) },
    { weight: 6, arbitrary: fc.tuple(value, fc.constantFrom("/unpause", "/unpause/", "//unpause", "/un/pause", "/UNPAUSE", "/unpaus", "/unpause/.."), query).map(([v, tail, q]) => `${BASE_PATH}/agents/by-number/${v}${tail}${q}`) },
    { weight: 1, arbitrary: fc.tuple(value, query).map(([v, q]) => `${BASE_PATH}/agents/by-id/${v}/pause${q}`) },
    { weight: 1, arbitrary: fc.tuple(value, query).map(([v, q]) => `${BASE_PATH}/agents/by-id/${v}/unpause${q}`) },
    { weight: 3, arbitrary: fc.tuple(fc.array(segment, { maxLength: 6 }), query).map(([s, q]) => "/" + s.join("/") + q) },
    { weight: 1, arbitrary: fc.constantFrom("*", "/", BASE_PATH, `${BASE_PATH}/`, `http://127.0.0.1${BASE_PATH}/agents`, `https://evil.example${BASE_PATH}/agents`, `/%2e%2e${BASE_PATH}/agents`, `${BASE_PATH}/agents%00`, `${BASE_PATH}%2Fagents`) },
  );

export const tokenSpec: fc.Arbitrary<TokenSpec> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<TokenSpec>({ kind: "none" }) },
  { weight: 10, arbitrary: fc.constantFrom<TokenName>("admin", "reader", "pauser", "revoked").map((name): TokenSpec => ({ kind: "named", name })) },
  { weight: 2, arbitrary: fc.oneof(fc.constantFrom("", " ", "null", "Bearer x", "agentd.#", "*", "%00", "\t"), fc.string({ unit: fc.constantFrom(..."abcdef0123456789-_.~+/= "), maxLength: 80 })).map((value): TokenSpec => ({ kind: "literal", value })) },
  // Below Node's 16 KiB header limit, so the request reaches the service.
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 9_000 }).map((size): TokenSpec => ({ kind: "huge", size })) },
  { weight: 1, arbitrary: fc.array(fc.constantFrom<TokenName>("admin", "reader", "pauser", "revoked"), { minLength: 2, maxLength: 3 }).map((names): TokenSpec => ({ kind: "duplicate", names })) },
);

const contentType: fc.Arbitrary<string> = fc.constantFrom(
  "application/json", "application/json", "application/json; charset=utf-8", "application/json;charset=UTF-8", "Application/JSON",
  "application/json; charset=latin1", "application/json; charset=utf-16", "application/json; charset=utf-32", "application/json; charset=bogus",
  "application/json; charset=\"utf-8\"", "application/json; foo=bar", "application/json;", "application/jsonx", "application/problem+json",
  "application/vnd.api+json", "text/json", "text/plain", "text/html", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
  "application/octet-stream", "*/*", "application/*", "", ";", "json", "application/json, text/plain",
);

const contentTypes: fc.Arbitrary<string[]> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<string[]>([]) },
  { weight: 6, arbitrary: contentType.map((t) => [t]) },
  { weight: 1, arbitrary: fc.array(contentType, { minLength: 2, maxLength: 3 }) },
);

const extraHeader: fc.Arbitrary<[string, string]> = fc.oneof(
  fc.constantFrom<[string, string]>(
    ["accept", "application/xml"], ["accept", "*/*"], ["accept", "text/html;q=0.9"], ["accept-charset", "latin1"],
    ["content-encoding", "gzip"], ["content-encoding", "br"], ["content-encoding", "deflate"], ["content-encoding", "identity"], ["content-encoding", "bogus"],
    ["expect", "100-continue"], ["origin", "https://evil.example"], ["x-http-method-override", "POST"], ["x-forwarded-for", "1.2.3.4"],
    ["x-request-id", "x".repeat(300)], ["cookie", "a=b"], ["authorization", "Bearer admin"], ["range", "bytes=0-1"], ["if-none-match", "*"],
    ["connection", "close"], ["upgrade", "h2c"],
  ),
  fc.tuple(fc.string({ unit: fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz-_0123456789"), minLength: 1, maxLength: 20 }), fc.string({ unit: fc.constantFrom(..." !#$%&'()*+,-./0123456789:;<=>?@ABCZ[]^_`az{|}~"), maxLength: 60 })),
);

const jsonValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ reason: fc.oneof(fc.string({ unit: "binary", maxLength: 100 }), fc.constantFrom("", "a\u0000b", "\u0000", "x".repeat(81), "\ud800", "é".repeat(80))) }) },
  { weight: 2, arbitrary: fc.record({ reason: fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string()), fc.object()) }) },
  { weight: 2, arbitrary: fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }) },
  { weight: 1, arbitrary: fc.constantFrom({ reason: "r", extra: 1 }, JSON.parse('{"__proto__": {"x": 1}}'), { constructor: { prototype: {} } }, { Reason: "x" }) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom(null, 0, -1, 1.5, 1e308, "", "{}", true, false, [], [{}], {}) },
);

export const bodySpec: fc.Arbitrary<BodySpec> = fc.oneof(
  { weight: 5, arbitrary: fc.constant<BodySpec>({ kind: "none" }) },
  { weight: 6, arbitrary: jsonValue.map((value): BodySpec => ({ kind: "json", value })) },
  {
    weight: 3,
    arbitrary: fc
      .oneof(
        fc.constantFrom("", " ", "\n", "{", "}", "{]", "[", "nul", "undefined", "NaN", "{'reason':'x'}", '{"reason":"x",}', '{"reason":"x"', '{"reason":"x"}}', '{"reason":"x"} {}', "\ufeff{}", '{"reason":"\\x"}', '{"reason":"\\ud800"}', '{"reason":"\\u0000"}', "1e99999", "-", '{"a":1,"a":2}', '{"reason":"x","reason":1}'),
        fc.string({ unit: "binary", maxLength: 60 }),
      )
      .map((text): BodySpec => ({ kind: "text", text })),
  },
  {
    weight: 2,
    arbitrary: fc
      .oneof(
        fc.constantFrom<number[]>([0xff, 0xfe], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0x00], [0xef, 0xbb, 0xbf, 0x7b, 0x7d], [0xfe, 0xff, 0x00, 0x7b, 0x00, 0x7d], [0x1f, 0x8b, 0x08, 0x00]),
        fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 8 }), fc.boolean()).map(([raw, wrapped]) => (wrapped ? [...Buffer.from('{"reason":"'), ...raw, ...Buffer.from('"}')] : [...raw])),
      )
      .map((bytes): BodySpec => ({ kind: "bytes", bytes })),
  },
  { weight: 1, arbitrary: fc.record({ size: fc.constantFrom(16 * 1024 - 20, 16 * 1024 + 1, 100_000, 1 << 20), asString: fc.boolean() }).map((b): BodySpec => ({ kind: "big", ...b })) },
  { weight: 1, arbitrary: fc.record({ depth: fc.constantFrom(50, 1000, 5000), objects: fc.boolean() }).map((b): BodySpec => ({ kind: "deep", ...b })) },
);

export const method: fc.Arbitrary<string> = fc.oneof({ weight: 10, arbitrary: fc.constantFrom(...METHODS) }, { weight: 1, arbitrary: fc.constantFrom(...ODD_METHODS) });

const anything: fc.Arbitrary<RequestSpec> = fc.record({
  method,
  target: target(pathValue),
  token: tokenSpec,
  contentTypes,
  chunked: fc.boolean(),
  extraHeaders: fc.array(extraHeader, { maxLength: 3 }),
  body: bodySpec,
});

export function bodyBytes(body: BodySpec): Buffer | undefined {
  switch (body.kind) {
    case "none":
      return undefined;
    case "json":
      return Buffer.from(JSON.stringify(body.value) ?? "undefined", "utf8");
    case "text":
      return Buffer.from(body.text, "utf8");
    case "bytes":
      return Buffer.from(body.bytes);
    case "big":
      return body.asString ? Buffer.from(`{"reason":"${"r".repeat(body.size)}"}`) : Buffer.alloc(body.size, "[");
    case "deep": {
      const open = body.objects ? '{"a":' : "[";
      const close = body.objects ? "}" : "]";
      return Buffer.from(open.repeat(body.depth) + "1" + close.repeat(body.depth));
    }
  }
}

/** The exact bytes of a request; every body is framed correctly, so the server never waits for bytes that do not come. */
export function render(spec: RequestSpec, tokens: Readonly<Record<TokenName, string>>): RawRequest {
  const headers: Array<[string, string]> = [["host", "localhost"]];
  switch (spec.token.kind) {
    case "named":
      headers.push(["x-auth-token", tokens[spec.token.name]]);
      break;
    case "literal":
      headers.push(["x-auth-token", spec.token.value]);
      break;
    case "huge":
      headers.push(["x-auth-token", "t".repeat(spec.token.size)]);
      break;
    case "duplicate":
      for (const name of spec.token.names) headers.push(["x-auth-token", tokens[name]]);
      break;
  }
  for (const type of spec.contentTypes) headers.push(["content-type", type]);
  headers.push(...spec.extraHeaders);
  const body = bodyBytes(spec.body);
  let payload: Buffer | undefined;
  if (body !== undefined) {
    if (spec.chunked && body.length > 0) {
      headers.push(["transfer-encoding", "chunked"]);
      payload = Buffer.concat([Buffer.from(body.length.toString(16) + "\r\n"), body, Buffer.from("\r\n0\r\n\r\n")]);
    } else {
      headers.push(["content-length", String(body.length)]);
      payload = body;
    }
  }
  return { bytes: requestBytes(spec.method, spec.target, headers, payload), head: spec.method === "HEAD" };
}

/** Decodes every well-formed %XX escape, leaving broken ones alone. */
export function looseDecode(s: string): string {
  return Buffer.from(s.replace(/%([0-9a-fA-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))), "latin1").toString("utf8");
}

/**
 * Requests one mistake away from valid: a contract operation with its own
 * method, mostly good tokens and JSON bodies, so most requests get past
 * routing, auth and media-type checks and reach parameter and body
 * validation, the handlers and the store.
 */
const nearlyValid: fc.Arbitrary<RequestSpec> = fc
  .record({
    route: fc.constantFrom("list", "by-id", "by-number", "pause", "pause", "pause", "unpause", "unpause", "unpause"),
    value: fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...LOGGED_IN, ...LOGGED_OUT, ...UNKNOWN_NUMBERS, "1", "2", "6", "7", "2147483647") },
      { weight: 2, arbitrary: pathValue },
    ),
    query: fc.oneof({ weight: 8, arbitrary: fc.constant("") }, query),
    token: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom<TokenName>("admin", "admin", "pauser", "reader").map((name): TokenSpec => ({ kind: "named", name })) },
      { weight: 1, arbitrary: tokenSpec },
    ),
    contentTypes: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom<string[]>(["application/json"], ["application/json; charset=utf-8"]) },
      { weight: 1, arbitrary: contentTypes },
    ),
    chunked: fc.boolean(),
    extraHeaders: fc.array(extraHeader, { maxLength: 1 }),
    body: bodySpec,
  })
  .map(({ route, value, query, ...rest }): RequestSpec => {
    const path = { list: `${BASE_PATH}/agents`, "by-id": `${BASE_PATH}/agents/by-id/${value}`, "by-number": `${BASE_PATH}/agents/by-number/${value}`, pause: `${BASE_PATH}/agents/by-number/${value}/pause`, unpause: `${BASE_PATH}/agents/by-number/${value}/unpause` }[route];
    return { method: route === "pause" || route === "unpause" ? "POST" : "GET", target: path + query, ...rest };
  });

export const requestSpec: fc.Arbitrary<RequestSpec> = fc.oneof({ weight: 1, arbitrary: anything }, { weight: 2, arbitrary: nearlyValid });

/**
 * Requests that are not well-formed HTTP/1.1, for Node's own parser to
 * reject before the application sees them: a name for the report, and the
 * bytes. Every one is complete, so a server that accepted it would answer
 * at once rather than wait for more bytes.
 */
export interface MalformedSpec {
  flaw: string;
  detail: string;
}

const CTLS = ["\u0000", "\u0001", "\u0008", "\u000b", "\u000c", "\u001b", "\u007f", "\r", "\n"];

export const malformedSpec: fc.Arbitrary<MalformedSpec> = fc.oneof(
  fc.constantFrom("FOO", "get", "Get", "BREW", "PRI", "G@T", "GET\u0000", "ＧＥＴ", "-", "POST/", "HTTP/1.1", "CONNECT").map((detail) => ({ flaw: "method", detail })),
  fc.string({ unit: "binary", minLength: 1, maxLength: 12 }).filter((s) => /[^\u0021-\u007e]/.test(s)).map((detail) => ({ flaw: "raw path", detail })),
  fc.constantFrom(...CTLS.filter((c) => c !== "\n")).map((detail) => ({ flaw: "control in header value", detail })),
  fc.constantFrom("x auth", "x\u0000y", "é", "(a)", "", "a:b", "x-auth-token ", " x-auth-token", "a\tb", "[x]").map((detail) => ({ flaw: "header name", detail })),
  fc.constantFrom("no host", "two hosts").map((detail) => ({ flaw: "host", detail })),
  fc.constantFrom("abc", "-1", "1.5", "2 2", "+2", "0x2", "", "2, 3", "99999999999999999999999").map((detail) => ({ flaw: "content-length", detail })),
  fc.constantFrom("two lengths", "length and chunked", "chunked twice", "gzip", "chunked, gzip", "bad chunk size", "chunk size overflow", "identity").map((detail) => ({ flaw: "framing", detail })),
  fc.constantFrom("HTTP/1.2", "HTTP/2.0", "HTTP/3", "HTTP/0.9", "HTTP/1.1x", "HTTP/11", "http/1.1", "").map((detail) => ({ flaw: "version", detail })),
  fc.constantFrom("bare LF", "bare CR", "obs-fold", "space before colon", "no colon").map((detail) => ({ flaw: "line syntax", detail })),
  fc.constantFrom("huge header", "huge path", "many headers").map((detail) => ({ flaw: "size", detail })),
  fc.constantFrom("websocket", "h2c").map((detail) => ({ flaw: "upgrade", detail })),
);

/** The bytes of a malformed request: a GET of the agent list or a pause of a logged-out agent, carrying one flaw. */
export function renderMalformed(spec: MalformedSpec, token: string): Buffer {
  const { flaw, detail } = spec;
  let method = "GET";
  let target = `${BASE_PATH}/agents`;
  let version = "HTTP/1.1";
  const lines: string[] = [];
  let body = "";
  const host = () => lines.push("Host: localhost");
  const auth = () => lines.push(`X-Auth-Token: ${token}`);
  switch (flaw) {
    case "method":
      method = detail;
      if (detail === "CONNECT") target = "127.0.0.1:22";
      host();
      auth();
      break;
    case "raw path":
      target = `${BASE_PATH}/agents/by-number/${detail}`;
      host();
      auth();
      break;
    case "control in header value":
      host();
      lines.push(`X-Auth-Token: ${token.slice(0, 4)}${detail}${token.slice(4)}`);
      break;
    case "header name":
      host();
      auth();
      lines.push(`${detail}: 1`);
      break;
    case "host":
      if (detail === "two hosts") lines.push("Host: a.example", "Host: b.example");
      auth();
      break;
    case "content-length":
      method = "POST";
      target = `${BASE_PATH}/agents/by-number/${LOGGED_OUT[0]}/pause`;
      host();
      auth();
      lines.push("Content-Type: application/json", `Content-Length: ${detail}`);
      body = "{}";
      break;
    case "framing":
      method = "POST";
      target = `${BASE_PATH}/agents/by-number/${LOGGED_OUT[0]}/pause`;
      host();
      auth();
      lines.push("Content-Type: application/json");
      body = "2\r\n{}\r\n0\r\n\r\n";
      if (detail === "two lengths") {
        lines.push("Content-Length: 2", "Content-Length: 3");
        body = "{} ";
      }
      if (detail === "length and chunked") lines.push("Content-Length: 2", "Transfer-Encoding: chunked");
      if (detail === "chunked twice") lines.push("Transfer-Encoding: chunked", "Transfer-Encoding: chunked");
      if (detail === "gzip") {
        lines.push("Transfer-Encoding: gzip", "Content-Length: 2");
        body = "{}";
      }
      if (detail === "chunked, gzip") lines.push("Transfer-Encoding: chunked, gzip");
      if (detail === "bad chunk size") {
        lines.push("Transfer-Encoding: chunked");
        body = "zz\r\n{}\r\n0\r\n\r\n";
      }
      if (detail === "chunk size overflow") {
        lines.push("Transfer-Encoding: chunked");
        body = "ffffffffffffffffffff\r\n{}\r\n0\r\n\r\n";
      }
      if (detail === "identity") {
        lines.push("Transfer-Encoding: identity", "Content-Length: 2");
        body = "{}";
      }
      break;
    case "version":
      version = detail;
      host();
      auth();
      break;
    case "line syntax":
      host();
      auth();
      if (detail === "obs-fold") lines.push("X-Folded: a", " b");
      if (detail === "space before colon") lines.push("X-Thing : 1");
      if (detail === "no colon") lines.push("X-Thing");
      break;
    case "upgrade":
      host();
      auth();
      lines.push("Connection: Upgrade", `Upgrade: ${detail}`);
      if (detail === "websocket") lines.push("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13");
      if (detail === "h2c") lines.push("HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA");
      break;
    case "size":
      host();
      auth();
      if (detail === "huge header") lines.push(`X-Big: ${"b".repeat(20_000)}`);
      if (detail === "huge path") target = `${BASE_PATH}/agents/by-number/${"9".repeat(20_000)}`;
      if (detail === "many headers") for (let i = 0; i < 3000; i++) lines.push(`X-H${i}: ${i}`);
      break;
  }
  const eol = flaw === "line syntax" && detail === "bare LF" ? "\n" : flaw === "line syntax" && detail === "bare CR" ? "\r" : "\r\n";
  const head = [`${method} ${target}${version ? " " + version : ""}`, ...lines].join(eol) + eol + eol;
  return Buffer.concat([Buffer.from(head, "utf8"), Buffer.from(body, "utf8")]);
}
