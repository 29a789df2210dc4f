// Starts the delivery of events: reconciles the outbox with the configured
// sinks (outbox-sinks.ts), then builds the sinks and the relay over them;
// no relay when no sink is configured (and then pauses record no event
// either: sinkNames() is empty), though events kept from an earlier
// configuration are still reported and counted. How delivery is counted is
// passed in, so that this module does not load prom-client (ops/metrics.ts).
import type { Logger } from "pino";
import type { EventsConfig } from "../config/config.js";
import type { Database } from "../db/sql.js";
import type { EventBacklog } from "../ops/prometheus.js";
import { reconcileOutbox } from "./outbox-sinks.js";
import { Relay, type RelayCounters } from "./relay.js";
import { sinkNames, type EventSink } from "./sink.js";

/** Bound on connecting to the bus and on one publish until confirmed. */
const BUS_TIMEOUT_MS = 10_000;

// $1: the configured sinks' names. Rows of other sinks are orphaned: kept,
// counted apart, and left out of the age of the oldest, which says how far
// behind delivery is.
const BACKLOG = `SELECT count(*) FILTER (WHERE sink = ANY($1::text[]))::int AS pending,
  count(*) FILTER (WHERE NOT (sink = ANY($1::text[])))::int AS orphaned,
  coalesce(extract(epoch FROM now() - min(created_at) FILTER (WHERE sink = ANY($1::text[]))), 0)::float8 AS oldest
  FROM event_outbox`;

/**
 * Registers delivery's metrics: given how to read the backlog, returns the
 * counters the relay bumps for each delivery and failure.
 */
export type CountDelivery = (backlog: () => Promise<EventBacklog>, kinds: readonly EventSink["kind"][]) => RelayCounters;

/**
 * The configured sinks. Each sink's module (and its client library: amqplib,
 * undici) is loaded only when that sink is configured, so a start without
 * events does not pay for loading them.
 */
async function buildSinks(config: EventsConfig, logger: Logger): Promise<EventSink[]> {
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

/**
 * Reconciles the outbox with the configuration, registers the metrics
 * (`count` null: nothing is counted), and starts the relay when a sink is
 * configured; returns null otherwise.
 */
export async function startDelivery(config: EventsConfig, db: Database, logger: Logger, count: CountDelivery | null): Promise<Relay | null> {
  const names = sinkNames(config);
  const eventsLogger = logger.child({ component: "events" });
  await reconcileOutbox(db, names, eventsLogger);
  const sinks = await buildSinks(config, eventsLogger);
  // Counted with no sink as well: events kept from an earlier configuration.
  const counters = count?.(
    async () => {
      const [row] = await db.query<{ pending: number; orphaned: number; oldest: number }>(BACKLOG, [names]);
      return { pending: row?.pending ?? 0, oldestSeconds: row?.oldest ?? 0, orphaned: row?.orphaned ?? 0 };
    },
    [...new Set(sinks.map((sink) => sink.kind))],
  );
  if (sinks.length === 0) return null;
  const relay = new Relay({
    sql: db,
    sinks,
    logger: eventsLogger,
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
