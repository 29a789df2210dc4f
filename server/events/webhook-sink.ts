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
import { packageVersion } from "../package-root.js";
import { answerExcerpt, urlSecrets } from "./answer-excerpt.js";
import { DeliveryRefused, webhookSinkName, type EventSink, type OutboxEvent } from "./sink.js";

/**
 * A 4xx that says this receiver takes none of the events now: a wrong
 * secret or a clock too far off (401), a wrong URL (403, 404, 405, 410),
 * or a wait (408, 429). The sink then looks down, as with a 5xx, a
 * redirect or no answer: its events wait together. Any other 4xx refuses
 * that event (a 400, a 409, a 422…): only its agent's events wait.
 */
const REFUSES_EVERY_EVENT = new Set([401, 403, 404, 405, 408, 410, 429]);

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
  /** Masked in what the receiver answers (answer-excerpt.ts). */
  private readonly secrets: string[];
  /** Who is calling, for the receiver's logs (and firewalls that refuse a request without one). */
  private readonly userAgent = `agentd/${packageVersion()}`;

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
    let status: number | null = null;
    try {
      const now = new Date();
      const response = await this.pool.request({
        path: this.path,
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": this.userAgent,
          "webhook-id": event.eventId,
          "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
          "webhook-signature": this.signers.map((signer) => signer.sign(event.eventId, now, event.payload)).join(" "),
        },
        body: event.payload,
        // request() follows no redirect: a 3xx is not a delivery, as with fetch's "manual".
        signal: abort,
      });
      status = response.statusCode;
      if (status >= 200 && status <= 299) {
        // Read (and drop) the body so the connection can be reused.
        await response.body.dump().catch(() => undefined);
        return;
      }
      const why = await answerExcerpt(response.body, this.secrets);
      const answered = `webhook answered ${status}${why === "" ? "" : `: ${why}`}`;
      if (status >= 400 && status <= 499 && !REFUSES_EVERY_EVENT.has(status)) throw new DeliveryRefused(answered);
      throw new Error(answered);
    } catch (err) {
      // The time-out fires the abort: say so, and which setting bounds it. A
      // receiver still sending its answer's body then is as slow as one that
      // never answered (its events wait together), but its status is said.
      if (aborted) {
        const what = status === null ? "did not answer" : `answered ${status}, and its answer did not end,`;
        throw new Error(`webhook ${what} within ${this.options.timeoutMs} ms (AGENTD_WEBHOOK_TIMEOUT)`, { cause: err });
      }
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
