// Publishes events on RabbitMQ as upstream 17.05 did: a durable topic
// exchange (default xivo), routing keys status.agent.pause/unpause, JSON,
// persistent, with publisher confirms.
//
// The connection is opened as delivery starts (prepare), which declares the
// exchange, so consumers can bind their queues to it before the first event,
// and dropped on any error, close or time-out; the next delivery (the relay
// retries with backoff) opens a new one. So the sink reconnects by itself
// without holding events in memory: until the broker confirms, an event
// stays in the outbox.
import amqp, { type ChannelModel, type ConfirmChannel } from "amqplib";
import type { Logger } from "pino";
import type { EventName } from "../store/agent-change.js";
import { BUS_SINK, type EventSink, type OutboxEvent } from "./sink.js";

const ROUTING_KEYS: Record<EventName, string> = {
  agent_paused: "status.agent.pause",
  agent_unpaused: "status.agent.unpause",
};

export interface BusSinkOptions {
  url: string;
  exchange: string;
  /** Bound on connecting, and on one publish until its confirm. */
  timeoutMs: number;
  logger: Logger;
}

interface Link {
  model: ChannelModel;
  channel: ConfirmChannel;
}

export class BusSink implements EventSink {
  readonly name = BUS_SINK;
  readonly kind = "bus" as const;
  private link: Promise<Link> | null = null;

  constructor(private readonly options: BusSinkOptions) {}

  async deliver(event: OutboxEvent): Promise<void> {
    const link = this.link ?? this.open();
    try {
      const { channel } = await withTimeout(link, this.options.timeoutMs, "connecting to the bus");
      await withTimeout(
        new Promise<void>((resolve, reject) => {
          channel.publish(
            this.options.exchange,
            ROUTING_KEYS[event.name],
            Buffer.from(event.payload),
            {
              contentType: "application/json",
              persistent: true,
              messageId: event.eventId,
              // AMQP's timestamp is in seconds.
              timestamp: Math.floor(event.createdAt.getTime() / 1000),
            },
            (err) => (err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve()),
          );
        }),
        this.options.timeoutMs,
        "waiting for the bus to confirm",
      );
    } catch (err) {
      this.drop(link);
      throw err;
    }
  }

  /**
   * Connects and declares the exchange now, in the background, and logs how
   * that went: a wrong address or password shows at start, not at the
   * first event. A failure is only logged: the first delivery tries again.
   */
  prepare(): void {
    const link = this.link ?? this.open();
    withTimeout(link, this.options.timeoutMs, "connecting to the bus").catch((err: unknown) => {
      this.drop(link);
      this.options.logger.warn({ err: (err as Error).message, exchange: this.options.exchange }, "bus not reachable at start: events wait in the outbox until it is");
    });
  }

  /** A new connection, as this.link; its close forgets it, and only it (a later one may have replaced it by then). */
  private open(): Promise<Link> {
    const link: Promise<Link> = this.connect(() => {
      if (this.link === link) this.link = null;
    });
    this.link = link;
    // At start, and again each time the bus is back after its connection was
    // lost or refused; not for a connection given up on meanwhile (a time-out
    // dropped it), which is closed.
    link.then(
      () => {
        if (this.link === link) this.options.logger.info({ exchange: this.options.exchange }, "bus connected, exchange declared");
      },
      () => undefined,
    );
    return link;
  }

  private async connect(onClose: () => void): Promise<Link> {
    const model = await amqp.connect(this.options.url, { timeout: this.options.timeoutMs });
    // Errors also arrive as 'close'; listening to 'error' keeps them from crashing the process.
    model.on("error", (err: Error) => this.options.logger.warn({ err: err.message }, "bus connection error"));
    model.on("close", onClose);
    try {
      const channel = await model.createConfirmChannel();
      channel.on("error", (err: Error) => this.options.logger.warn({ err: err.message }, "bus channel error"));
      // As upstream declared it; a no-op when it exists with these properties.
      await channel.assertExchange(this.options.exchange, "topic", { durable: true });
      return { model, channel };
    } catch (err) {
      await model.close().catch(() => undefined);
      throw err;
    }
  }

  private drop(link: Promise<Link>): void {
    if (this.link === link) this.link = null;
    link.then(({ model }) => model.close()).catch(() => undefined);
  }

  async close(): Promise<void> {
    const link = this.link;
    this.link = null;
    // Bounded: a broker that took the connection and then went silent must not hold the server's stop.
    if (link) await withTimeout(link.then(({ model }) => model.close()), this.options.timeoutMs, "closing the bus connection").catch(() => undefined);
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out ${what} after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
