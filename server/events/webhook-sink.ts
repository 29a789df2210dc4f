// POSTs events to one receiver, signed per Standard Webhooks (the
// standardwebhooks package): webhook-id is the event id, the same on every
// attempt, so the receiver can drop repeats. Each attempt is signed at its
// own time, since receivers reject a webhook-timestamp older than a few
// minutes and a retry may come later than that. With several secrets (one
// replacing another), the signature header carries one `v1,` entry per
// secret, as Standard Webhooks provides for: a receiver holding either
// accepts the delivery.
//
// An undici Pool for the receiver's origin, asked with request() and a
// path, rather than fetch() or the global dispatcher: the relay posts every
// event, and both fetch's Web-streams machinery and an Agent (which looks
// up the pool of each URL's origin, with the URL parsed on every request)
// cost more CPU per delivery than a Pool of our own, CPU the API shares on
// the embedded database (docs/performance.md).
import { EventEmitter } from "node:events";
import { Pool } from "undici";
import { Webhook } from "standardwebhooks";
import { DeliveryRefused, webhookSinkName, type EventSink, type OutboxEvent } from "./sink.js";

/**
 * A 4xx that says this receiver takes none of the events now: a wrong
 * secret or a clock too far off (401), a wrong URL (403, 404, 405, 410),
 * or a wait (408, 429). The sink then looks down, as with a 5xx, a
 * redirect or no answer: its events wait together. Any other 4xx refuses
 * that event (a 400, a 409, a 422…): only its agent's events wait.
 */
const REFUSES_EVERY_EVENT = new Set([401, 403, 404, 405, 408, 410, 429]);

/** The most of a refusal's body kept with the status, in characters: the receiver's reason, not its whole page. */
const ANSWER_EXCERPT_LENGTH = 200;
/** The bytes decoded for it: more than the excerpt, so that a secret is masked whole before the cut. */
const ANSWER_DECODED_BYTES = 4 * 1024;
/** Read (and dropped) past those so the connection is kept; a longer answer closes it instead. */
const ANSWER_READ_BYTES = 64 * 1024;

/**
 * The start of a failed delivery's answer, on one line with no control
 * characters: a receiver that refuses an event usually says why in its
 * body, and the operator deciding whether to drop the event reads it in
 * the log and in `agentd events list --sink`. The rest of an ordinary
 * answer is read and dropped, keeping the connection; past
 * ANSWER_READ_BYTES the read stops, which closes it. `secrets` (the query
 * values and credentials of the receiver's URL) are masked: a receiver may
 * echo the URL it was asked.
 */
async function answerStart(body: AsyncIterable<Buffer>, secrets: readonly string[]): Promise<string> {
  const kept: Buffer[] = [];
  let read = 0;
  try {
    for await (const chunk of body) {
      if (read < ANSWER_DECODED_BYTES) kept.push(chunk.subarray(0, ANSWER_DECODED_BYTES - read));
      read += chunk.length;
      if (read >= ANSWER_READ_BYTES) break;
    }
  } catch {
    // An answer cut short still has its status: that is the failure.
  }
  // Streaming: a character cut at the last byte kept is left out, not replaced.
  let text = new TextDecoder().decode(Buffer.concat(kept), { stream: true });
  for (const secret of secrets) text = text.split(secret).join("…");
  // eslint-disable-next-line no-control-regex -- control characters are what this removes
  const line = text.replace(/[\u0000-\u001f\u007f-\u009f\s]+/g, " ").trim();
  return Array.from(line).slice(0, ANSWER_EXCERPT_LENGTH).join("").trimEnd();
}

/**
 * What a receiver's answer must not repeat into the log: the URL's query
 * values and credentials (the log shows the URL without them), as sent and
 * decoded; longest first, so that a value is masked whole.
 */
function urlSecrets(url: URL): string[] {
  const sent = [...url.search.slice(1).split("&").map((pair) => pair.slice(pair.indexOf("=") + 1)), url.username, url.password];
  const decoded = [...url.searchParams.values(), ...[url.username, url.password].map(decodedOrAsIs)];
  return [...new Set([...sent, ...decoded])].filter((value) => value.length > 0).sort((a, b) => b.length - a.length);
}

function decodedOrAsIs(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

export interface WebhookSinkOptions {
  url: string;
  /** One secret, or several separated by spaces (AGENTD_WEBHOOK_SECRET). */
  secret: string;
  timeoutMs: number;
}

export class WebhookSink implements EventSink {
  readonly name: string;
  readonly kind = "webhook" as const;
  private readonly signers: Webhook[];
  private readonly pool: Pool;
  /** The URL's path and query, as the request line carries them. */
  private readonly path: string;
  /** Masked in what the receiver answers (urlSecrets). */
  private readonly secrets: string[];

  constructor(private readonly options: WebhookSinkOptions) {
    this.name = webhookSinkName(options.url);
    this.signers = options.secret.trim().split(/\s+/).map((secret) => new Webhook(secret));
    const url = new URL(options.url);
    this.pool = new Pool(url.origin, { keepAliveTimeout: 30_000, keepAliveMaxTimeout: 60_000 });
    this.path = `${url.pathname}${url.search}`;
    this.secrets = urlSecrets(url);
  }

  async deliver(event: OutboxEvent): Promise<void> {
    // The whole delivery, answer and body included, is bounded by timeoutMs
    // (the relay's lease counts on it). The abort signal is an EventEmitter,
    // which undici accepts as well as an AbortSignal, fired by a plain
    // timer: AbortSignal.timeout() costs an EventTarget, a timer and a
    // finalizer per event, a noticeable share of a delivery's CPU.
    const abort = new EventEmitter();
    let aborted = false;
    const timer = setTimeout(() => {
      aborted = true;
      abort.emit("abort");
    }, this.options.timeoutMs);
    try {
      const now = new Date();
      const response = await this.pool.request({
        path: this.path,
        method: "POST",
        headers: {
          "content-type": "application/json",
          "webhook-id": event.eventId,
          "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
          "webhook-signature": this.signers.map((signer) => signer.sign(event.eventId, now, event.payload)).join(" "),
        },
        body: event.payload,
        // request() follows no redirect: a 3xx is not a delivery, as with fetch's "manual".
        signal: abort,
      });
      const status = response.statusCode;
      if (status >= 200 && status <= 299) {
        // Read (and drop) the body so the connection can be reused.
        await response.body.dump().catch(() => undefined);
        return;
      }
      const why = await answerStart(response.body, this.secrets);
      const answered = `webhook answered ${status}${why === "" ? "" : `: ${why}`}`;
      if (status >= 400 && status <= 499 && !REFUSES_EVERY_EVENT.has(status)) throw new DeliveryRefused(answered);
      throw new Error(answered);
    } catch (err) {
      // The time-out fires the abort: say so, and which setting bounds it.
      if (aborted) throw new Error(`webhook did not answer within ${this.options.timeoutMs} ms (AGENTD_WEBHOOK_TIMEOUT)`, { cause: err });
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
