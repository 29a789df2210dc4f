import type { Variables } from "./variables.js";

/** Each variable's value, under its key in VARIABLES: what its parser returns, or its `unset` value. */
export type Values = { [K in keyof Variables]: ReturnType<Variables[K]["parse"]> };

/** Where the events go (server/events/); no sink: no event is recorded. */
export type EventsConfig = Pick<
  Values,
  "busUrl" | "busExchange" | "webhookUrls" | "webhookSecret" | "webhookTimeoutMs" | "retryMinMs" | "retryMaxMs" | "pollMs"
>;

/**
 * Everything the server can be configured with, read only from the
 * environment (load.ts): the value of each variable of variables.ts, with
 * the events' grouped and the two of the rate limit made one.
 */
export type Config = Omit<Values, keyof EventsConfig | "rateLimit" | "rateBurst" | "authCheckRate" | "authCheckBurst"> & {
  /** null: rate limiting disabled. */
  rateLimit: { perSecond: number; burst: number } | null;
  /** The cap on checks sent to the external auth service; null: none. */
  authCheckLimit: { perSecond: number; burst: number } | null;
  events: EventsConfig;
};
