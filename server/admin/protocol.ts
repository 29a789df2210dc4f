/** What the admin CLI asks a running server over the admin socket: one JSON line each way. */
export type AdminRequest =
  | { op: "token.create"; acls: string[]; ttlSeconds: number | null }
  | { op: "token.revoke"; token: string }
  | { op: "token.revoke-id"; id: string }
  | { op: "token.list" }
  | { op: "import"; text: string }
  /**
   * An import whose file is the whole fleet: the agents it does not name
   * are removed. An op of its own, as events.drop-event: a server that
   * predates it refuses it rather than import without removing.
   */
  | { op: "import.replace"; text: string }
  | { op: "events.list" }
  /** The events of one sink that failed at least once (`agentd events list --sink`). */
  | { op: "events.failing"; sink: string }
  /** `sink`: an outbox sink name (events/sink.ts); `force`: drop it even when it is configured. */
  | { op: "events.drop"; sink: string; force: boolean }
  /**
   * One event of a sink, by its id. An op of its own, not a field of
   * events.drop: a server that predates it answers that it does not know
   * the command, where it would have ignored a field and dropped the queue.
   */
  | { op: "events.drop-event"; sink: string; event: string };

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

/** An event that failed at least once, as `events.failing` answers it. Times are ISO 8601. */
export interface FailingEventAnswer {
  event: string;
  agent: number;
  name: string;
  recorded: string;
  attempts: number;
  /** null: at the relay's next claim. On PostgreSQL, while an instance tries it, the end of that claim's lease. */
  nextTry: string | null;
  /** Whether nextTry has come (or there is none), by the database's clock. */
  due: boolean;
  lastError: string | null;
}

/** One sink's failing events, oldest first (at most a page of them), and its counts. */
export interface SinkFailuresAnswer {
  /** The outbox name: "bus" or "webhook <URL>". */
  sink: string;
  pending: number;
  failing: number;
  events: FailingEventAnswer[];
}

/** A token as `token list` shows it: never the secret or its hash. Times are ISO 8601. */
export interface ListedToken {
  id: string;
  acls: string[];
  /** null: never expires. */
  expiresAt: string | null;
  createdAt: string;
}

export type AdminResponse =
  | {
      ok: true;
      token?: string;
      id?: string;
      /** token.create: the AGENTD_AUTH_URL of the process that created it, whose server never reads its own tokens; null when unset. */
      authUrl?: string | null;
      revoked?: boolean;
      tokens?: ListedToken[];
      imported?: number;
      /** import.replace: the agents removed, which the file did not name. */
      removed?: number;
      sinks?: SinkBacklogAnswer[];
      failures?: SinkFailuresAnswer;
      dropped?: number;
    }
  | { ok: false; error: string; problems?: string[] };
