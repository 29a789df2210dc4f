// One HTTPS request to a server under test, through a dispatcher that trusts
// only that server's certificate, with the answer read whole.
import { request, type Dispatcher } from "undici";

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON when the response is JSON, else undefined. */
  json: any;
  text: string;
}

export interface CallOptions {
  /** Sent as X-Auth-Token; undefined or null sends none. */
  token?: string | null;
  /** Serialised as JSON, with a JSON Content-Type unless `headers` names one. */
  body?: unknown;
  /** Sent as is, for bodies that are not JSON. */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

export async function callHttps(dispatcher: Dispatcher, method: string, url: string, options: CallOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined && options.token !== null) headers["x-auth-token"] = options.token;
  let body: string | Buffer | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const answer = await request(url, { method: method as "GET", headers, body, dispatcher });
  const text = await answer.body.text();
  const type = String(answer.headers["content-type"] ?? "");
  return {
    status: answer.statusCode,
    headers: answer.headers,
    json: type.includes("json") && text !== "" ? JSON.parse(text) : undefined,
    text,
  };
}
