// What the relay delivers to: the bus or one webhook URL. Each sink has its
// own queue in the outbox (rows carry its name), so a receiver that is down
// holds back its own events only.
import type { EventName } from "../store/agent-change.js";

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

export interface EventSink {
  /** Its key in the outbox: "bus", or "webhook " and the URL. */
  readonly name: string;
  /** The metrics label: bus or webhook (never a URL). */
  readonly kind: "bus" | "webhook";
  /** Resolves once the sink has the event; throws (after its own time-out at most) otherwise. */
  deliver(event: OutboxEvent): Promise<void>;
  close(): Promise<void>;
}

export const BUS_SINK = "bus";
export const webhookSinkName = (url: string): string => `webhook ${url}`;

/** The outbox sink names a configuration delivers to; empty: no event is recorded. */
export function sinkNames(config: { busUrl: string | null; webhookUrls: readonly string[] }): string[] {
  return [...(config.busUrl === null ? [] : [BUS_SINK]), ...config.webhookUrls.map(webhookSinkName)];
}
