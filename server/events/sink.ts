// What the relay delivers to: the bus or one webhook URL. Each sink has its
// own queue in the outbox (rows carry its name), so a receiver that is down
// holds back its own events only.
import type { EventsConfig } from "../config/config.js";
import type { EventName } from "../store/agent-change.js";
import { url } from "../config/parsers.js";
import { shownUrl } from "../shown-url.js";

/** One outbox row, as the relay hands it to a sink. */
export interface OutboxEvent {
  seq: string;
  /** The event's id: the same for every sink and every delivery of one event (AMQP messageId, webhook-id). */
  eventId: string;
  agentId: number;
  name: EventName;
  /** The body, exactly as published and signed. */
  payload: string;
  /** When the change was committed. */
  createdAt: Date;
}

/**
 * A delivery the sink answered but did not take: this event is refused, and
 * the sink is not down (most of a webhook's 4xx: webhook-sink.ts). The relay then holds back only
 * that agent's events, not every agent's.
 */
export class DeliveryRefused extends Error {}

export interface EventSink {
  /** Its key in the outbox: "bus", or "webhook " and the URL. */
  readonly name: string;
  /** The metrics label: bus or webhook (never a URL). */
  readonly kind: "bus" | "webhook";
  /**
   * Resolves once the sink has the event; throws (after its own time-out at
   * most) otherwise: a DeliveryRefused when the sink answered and refused
   * this event, any other error when it looks down.
   */
  deliver(event: OutboxEvent): Promise<void>;
  /** Called once as delivery starts, not awaited: gets ready for the first event (the bus connects and declares its exchange). */
  prepare?(): void;
  close(): Promise<void>;
}

export const BUS_SINK = "bus";
const WEBHOOK_PREFIX = "webhook ";

/**
 * A webhook's key in the outbox: its URL as the URL standard writes it
 * (`new URL(u).href`: scheme and host in lower case, no default port, no
 * dot segments), so that one receiver written two ways is one sink and a
 * configuration rewritten in another spelling keeps its queue. Nothing
 * beyond the standard: a trailing slash is another URL, and stays one.
 */
export const webhookSinkName = (url: string): string => `${WEBHOOK_PREFIX}${new URL(url).href}`;

/** The outbox sink names a configuration delivers to; empty: no event is recorded. */
export function sinkNames(config: { busUrl: string | null; webhookUrls: readonly string[] }): string[] {
  return [...new Set([...(config.busUrl === null ? [] : [BUS_SINK]), ...config.webhookUrls.map(webhookSinkName)])];
}

/**
 * A sink name as stored in the outbox, in today's spelling: versions before
 * webhookSinkName normalised the URL stored it as it was configured. A name
 * this version cannot read stays as it is.
 */
export function canonicalSinkName(stored: string): string {
  if (!stored.startsWith(WEBHOOK_PREFIX)) return stored;
  try {
    return webhookSinkName(stored.slice(WEBHOOK_PREFIX.length));
  } catch {
    return stored;
  }
}

/**
 * The sink an operator names on the command line: `bus`, or a webhook's
 * http(s) URL in any spelling. Throws when it is neither.
 */
export function sinkNameFromArgument(text: string): string {
  if (text === BUS_SINK) return BUS_SINK;
  try {
    return webhookSinkName(url(text, ["http:", "https:"], true).href);
  } catch {
    throw new Error("expected bus or a webhook's http:// or https:// URL");
  }
}

/** How a sink is shown to an operator: bus, or the webhook's URL (the outbox's name without its prefix). */
export function sinkDisplayName(name: string): string {
  return name.startsWith(WEBHOOK_PREFIX) ? name.slice(WEBHOOK_PREFIX.length) : name;
}

/**
 * How a sink is named in the log, which more people read than the
 * configuration: a webhook's URL without a user name, password or query
 * (any of which may carry a receiver's secret); the path is kept, since it
 * is what tells two receivers on one host apart.
 */
export function sinkLogName(name: string): string {
  if (!name.startsWith(WEBHOOK_PREFIX)) return name;
  try {
    const url = new URL(name.slice(WEBHOOK_PREFIX.length));
    return `${url.origin}${url.pathname}${url.search === "" ? "" : "?…"}`;
  } catch {
    return "webhook (unreadable URL)";
  }
}

/**
 * The configured sinks as a start-up banner names them: each webhook as
 * sinkLogName does (no query, which may hold a receiver's secret), the bus
 * as shownUrl does (no password or query), with its exchange.
 */
export function sinkSummaries(events: Pick<EventsConfig, "webhookUrls" | "busUrl" | "busExchange">): string[] {
  const bus = events.busUrl === null ? [] : [`bus ${shownUrl(events.busUrl)} (exchange ${events.busExchange})`];
  return [...events.webhookUrls.map((u) => `webhook ${sinkLogName(webhookSinkName(u))}`), ...bus];
}
