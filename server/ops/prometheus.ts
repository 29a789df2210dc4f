// The service's Prometheus metrics, in a registry of its own (not
// prom-client's global one), so each server instance, and each test, has
// its own counters.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { Metrics } from "./metrics.js";

export interface BuildInfo {
  /** The package version, e.g. 17.5.0. */
  version: string;
  /** The contract release it serves, e.g. 17.05. */
  release: string;
}

export interface PrometheusMetrics extends Metrics {
  readonly registry: Registry;
  /** For gauges whose value is read when scraped (e.g. dropped log lines, event backlog). */
  gauge(name: string, help: string, collect: () => number | Promise<number>): void;
  counterFrom(name: string, help: string, collect: () => number): void;
}

// Latency buckets from 1 ms to 10 s: API answers are milliseconds, a stalled
// dependency is seconds.
const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createMetrics(build: BuildInfo): PrometheusMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // Gauges named like counters, which `promtool check metrics` rejects; their
  // per-type siblings (nodejs_active_handles{type}, …) carry the same numbers.
  for (const name of ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"]) {
    registry.removeSingleMetric(name);
  }

  new Gauge({
    name: "agentd_build_info",
    help: "Always 1; the labels say which build and contract release this instance runs.",
    labelNames: ["version", "release"],
    registers: [registry],
  }).set(build, 1);

  const requests = new Counter({
    name: "agentd_http_requests_total",
    help: "API requests, by contract operation (unknown when none matched) and status answered (aborted when the connection ended before the answer was sent).",
    labelNames: ["operation", "status"],
    registers: [registry],
  });
  const requestSeconds = new Histogram({
    name: "agentd_http_request_duration_seconds",
    help: "Time from a request's arrival to its answer, by contract operation.",
    labelNames: ["operation"],
    buckets: SECONDS,
    registers: [registry],
  });
  const querySeconds = new Histogram({
    name: "agentd_db_query_duration_seconds",
    help: "Time of one database statement or transaction, failed ones included.",
    buckets: SECONDS,
    registers: [registry],
  });
  const dbErrors = new Counter({
    name: "agentd_db_errors_total",
    help: "Database statements or transactions that failed.",
    registers: [registry],
  });
  const authChecks = new Counter({
    name: "agentd_auth_checks_total",
    help: "Token checks, by result: allowed, denied (no ACL), unknown_token, unavailable (the check could not be made), throttled (not made: the cap on checks sent to the auth service was reached).",
    labelNames: ["result"],
    registers: [registry],
  });
  for (const result of ["allowed", "denied", "unknown_token", "unavailable", "throttled"] as const) authChecks.inc({ result }, 0);
  const authCacheHits = new Counter({
    name: "agentd_auth_cache_hits_total",
    help: "Token checks answered from the external auth service's cached answers.",
    registers: [registry],
  });
  const rateLimited = new Counter({
    name: "agentd_rate_limited_total",
    help: "Requests refused with 429 by the rate limit.",
    registers: [registry],
  });

  return {
    registry,
    httpRequest(operation, status, seconds) {
      requests.inc({ operation, status });
      requestSeconds.observe({ operation }, seconds);
    },
    dbQuery(seconds, failed) {
      querySeconds.observe(seconds);
      if (failed) dbErrors.inc();
    },
    authCheck: (result) => authChecks.inc({ result }),
    authCacheHit: () => authCacheHits.inc(),
    rateLimited: () => rateLimited.inc(),
    gauge(name, help, collect) {
      new Gauge({
        name,
        help,
        registers: [registry],
        async collect() {
          this.set(await collect());
        },
      });
    },
    counterFrom(name, help, collect) {
      // A count kept elsewhere (it only grows), exposed as a counter.
      new Counter({
        name,
        help,
        registers: [registry],
        collect() {
          this.reset();
          this.inc(collect());
        },
      });
    },
  };
}

/** The event backlog, read (events/delivery.ts) when scraped. */
export interface EventBacklog {
  /** Outbox rows waiting for a configured sink (one per event and sink). */
  pending: number;
  /** Age of the oldest of them; 0 when there is none. */
  oldestSeconds: number;
  /** Outbox rows kept for sinks this instance is not configured with: delivered only if their sink is configured again. */
  orphaned: number;
}

/**
 * The event relay's metrics: the backlog (one query per scrape) and the
 * delivery counters by sink kind (bus or webhook: never a URL, which may
 * carry a receiver's secret).
 */
export function registerEventMetrics(
  metrics: PrometheusMetrics,
  backlog: () => Promise<EventBacklog>,
  /** The kinds of the configured sinks: their counters are shown from the start, at 0, for alerts to have a series. */
  kinds: readonly ("bus" | "webhook")[] = [],
): {
  delivered(sink: "bus" | "webhook"): void;
  failed(sink: "bus" | "webhook"): void;
} {
  // The gauges are read in one scrape: one query answers them all. A read
  // that fails (the database is down) shows them as NaN, unknown: thrown,
  // it failed the whole scrape, and every other metric of the outage
  // (the 503s, the database errors) was lost with it. The failure itself is
  // counted in agentd_db_errors_total.
  let last: Promise<EventBacklog | null> | null = null;
  const read = (): Promise<EventBacklog | null> => {
    last ??= backlog()
      .catch(() => null)
      .finally(() => setImmediate(() => (last = null)));
    return last;
  };
  metrics.gauge(
    "agentd_events_pending",
    "Events recorded and not yet delivered to a configured sink, one per event and sink; NaN while the database cannot be read.",
    async () => (await read())?.pending ?? Number.NaN,
  );
  metrics.gauge(
    "agentd_event_oldest_pending_seconds",
    "Age of the oldest event not yet delivered to a configured sink; 0 when none waits, NaN while the database cannot be read.",
    async () => (await read())?.oldestSeconds ?? Number.NaN,
  );
  metrics.gauge(
    "agentd_events_orphaned",
    "Events kept for sinks this instance is not configured with: delivered if their sink is configured again, deleted only by agentd events drop; NaN while the database cannot be read.",
    async () => (await read())?.orphaned ?? Number.NaN,
  );
  const delivered = new Counter({
    name: "agentd_events_delivered_total",
    help: "Events delivered, by sink (bus or webhook).",
    labelNames: ["sink"],
    registers: [metrics.registry],
  });
  const failures = new Counter({
    name: "agentd_event_delivery_failures_total",
    help: "Event delivery attempts that failed and will be retried, by sink (bus or webhook).",
    labelNames: ["sink"],
    registers: [metrics.registry],
  });
  for (const sink of kinds) {
    delivered.inc({ sink }, 0);
    failures.inc({ sink }, 0);
  }
  return {
    delivered: (sink) => delivered.inc({ sink }),
    failed: (sink) => failures.inc({ sink }),
  };
}
