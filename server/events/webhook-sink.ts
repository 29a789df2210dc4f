// POSTs events to one receiver, signed per Standard Webhooks (the
// standardwebhooks package): webhook-id is the event id, the same on every
// attempt, so the receiver can drop repeats. Each attempt is signed at its
// own time, since receivers reject a webhook-timestamp older than a few
// minutes and a retry may come later than that.
import { Webhook } from "standardwebhooks";
import { webhookSinkName, type EventSink, type OutboxEvent } from "./sink.js";

export interface WebhookSinkOptions {
  url: string;
  secret: string;
  timeoutMs: number;
}

export class WebhookSink implements EventSink {
  readonly name: string;
  readonly kind = "webhook" as const;
  private readonly signer: Webhook;

  constructor(private readonly options: WebhookSinkOptions) {
    this.name = webhookSinkName(options.url);
    this.signer = new Webhook(options.secret);
  }

  async deliver(event: OutboxEvent): Promise<void> {
    const now = new Date();
    const response = await fetch(this.options.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "webhook-id": event.eventId,
        "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
        "webhook-signature": this.signer.sign(event.eventId, now, event.payload),
      },
      body: event.payload,
      redirect: "manual",
      signal: AbortSignal.timeout(this.options.timeoutMs),
    });
    // Read (and drop) the body so the connection can be reused.
    await response.arrayBuffer().catch(() => undefined);
    if (response.status < 200 || response.status > 299) throw new Error(`webhook answered ${response.status}`);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
