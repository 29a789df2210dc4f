/** What the admin CLI asks a running server over the admin socket: one JSON line each way. */
export type AdminRequest =
  | { op: "token.create"; acls: string[]; ttlSeconds: number | null }
  | { op: "token.revoke"; token: string }
  | { op: "import"; text: string }
  | { op: "events.list" }
  /** `sink`: an outbox sink name (events/sink.ts); `force`: drop it even when it is configured. */
  | { op: "events.drop"; sink: string; force: boolean };

/** What waits for one sink, as `events.list` answers it. */
export interface SinkBacklogAnswer {
  /** The outbox name: "bus" or "webhook <URL>". */
  sink: string;
  pending: number;
  /** ISO 8601 time of the oldest. */
  oldest: string;
  /** Whether the configuration of the process that answered delivers to it. */
  configured: boolean;
}

export type AdminResponse =
  | { ok: true; token?: string; revoked?: boolean; imported?: number; sinks?: SinkBacklogAnswer[]; dropped?: number }
  | { ok: false; error: string; problems?: string[] };
