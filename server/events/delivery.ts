// Starts the delivery of events: builds the configured sinks and the relay
// over them; nothing when no sink is configured (and then pauses record no
// event either: sinkNames() is empty). How delivery is counted is passed in,
// so that this module does not load prom-client (ops/metrics.ts).
import type { Logger } from "pino";
import type { EventsConfig } from "../config/config.js";
import type { Database } from "../db/sql.js";
import { Relay, type RelayCounters } from "./relay.js";
import type { EventSink } from "./sink.js";

/** Bound on connecting to the bus and on one publish until confirmed. */
const BUS_TIMEOUT_MS = 10_000;

const BACKLOG = `SELECT count(*)::int AS pending,
  coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS oldest FROM event_outbox`;

/** The events not yet delivered, read when the metrics ask. */
export interface DeliveryBacklog {
  /** Outbox rows not yet delivered (one per event and sink). */
  pending: number;
  /** Age of the oldest of them; 0 when there is none. */
  oldestSeconds: number;
}

/**
 * Registers delivery's metrics: given how to read the backlog, returns the
 * counters the relay bumps for each delivery and failure.
 */
export type CountDelivery = (backlog: () => Promise<DeliveryBacklog>) => RelayCounters;

/**
 * The configured sinks. Each sink's module (and its client library: amqplib,
 * undici) is loaded only when that sink is configured, so a start without
 * events does not pay for loading them.
 */
export async function buildSinks(config: EventsConfig, logger: Logger): Promise<EventSink[]> {
  const sinks: EventSink[] = [];
  if (config.busUrl !== null) {
    const { BusSink } = await import("./bus-sink.js");
    sinks.push(new BusSink({ url: config.busUrl, exchange: config.busExchange, timeoutMs: BUS_TIMEOUT_MS, logger }));
  }
  if (config.webhookUrls.length > 0) {
    const { WebhookSink } = await import("./webhook-sink.js");
    for (const url of config.webhookUrls) {
      // load.ts refuses webhook URLs without a secret.
      sinks.push(new WebhookSink({ url, secret: config.webhookSecret ?? "", timeoutMs: config.webhookTimeoutMs }));
    }
  }
  return sinks;
}

/** Starts the relay when a sink is configured; null otherwise. `count` null: nothing is counted. */
export async function startDelivery(config: EventsConfig, db: Database, logger: Logger, count: CountDelivery | null): Promise<Relay | null> {
  const sinks = await buildSinks(config, logger);
  if (sinks.length === 0) return null;
  const counters = count?.(async () => {
    const [row] = await db.query<{ pending: number; oldest: number }>(BACKLOG);
    return { pending: row?.pending ?? 0, oldestSeconds: row?.oldest ?? 0 };
  });
  const relay = new Relay({
    sql: db,
    sinks,
    logger: logger.child({ component: "events" }),
    retryMinMs: config.retryMinMs,
    retryMaxMs: config.retryMaxMs,
    pollMs: config.pollMs,
    // Longer than any one delivery can take, so no other instance claims a row being delivered.
    leaseMs: 2 * Math.max(BUS_TIMEOUT_MS, config.webhookTimeoutMs) + 5_000,
    ...(counters ? { counters } : {}),
  });
  await relay.start(db.kind === "pglite");
  return relay;
}
