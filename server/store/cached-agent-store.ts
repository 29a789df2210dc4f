import type { AgentRecord, AgentStatus, AgentStore, PauseOutcome } from "./agent-store.js";

interface Snapshot {
  list: AgentStatus[];
  byId: Map<number, AgentStatus>;
  byNumber: Map<string, AgentStatus>;
}

/**
 * Serves reads from memory for a database that only this process writes:
 * the embedded PGlite database, which the data-directory lock gives to one
 * process, and whose every write (API, admin socket) goes through this
 * store. Reads then cost no query, and the cache is exact: a pause updates
 * the cached agent only after the database committed it.
 *
 * Not for PostgreSQL, where other instances write behind its back.
 */
export class CachedAgentStore implements AgentStore {
  private snapshot: Promise<Snapshot> | null = null;

  constructor(private readonly inner: AgentStore) {}

  get originUuid(): string {
    return this.inner.originUuid;
  }

  private load(): Promise<Snapshot> {
    if (this.snapshot === null) {
      const loading = this.inner.list().then((list) => ({
        list,
        byId: new Map(list.map((agent) => [agent.id, agent])),
        byNumber: new Map(list.map((agent) => [agent.number, agent])),
      }));
      this.snapshot = loading;
      // A failed load is not remembered: the next read asks the database again.
      loading.catch(() => {
        if (this.snapshot === loading) this.snapshot = null;
      });
    }
    return this.snapshot;
  }

  async list(): Promise<AgentStatus[]> {
    return (await this.load()).list;
  }

  async getById(id: number): Promise<AgentStatus | undefined> {
    return (await this.load()).byId.get(id);
  }

  async getByNumber(number: string): Promise<AgentStatus | undefined> {
    return (await this.load()).byNumber.get(number);
  }

  async pause(number: string, reason: string | null): Promise<PauseOutcome> {
    const outcome = await this.inner.pause(number, reason);
    if (outcome === "paused") {
      const current = this.snapshot;
      if (current !== null) {
        // Replace the agent's object (never mutate it: a response may be
        // serialising the old one) in a new snapshot.
        this.snapshot = current.then((s) => {
          const old = s.byNumber.get(number);
          if (old === undefined) return s;
          const updated: AgentStatus = { ...old, paused: true, paused_reason: reason };
          const list = s.list.map((agent) => (agent === old ? updated : agent));
          const byId = new Map(s.byId).set(updated.id, updated);
          const byNumber = new Map(s.byNumber).set(number, updated);
          return { list, byId, byNumber };
        });
        this.snapshot.catch(() => (this.snapshot = null));
      }
    }
    return outcome;
  }

  async upsert(agents: readonly AgentRecord[]): Promise<void> {
    try {
      await this.inner.upsert(agents);
    } finally {
      // Whether or not it committed, the next read asks the database.
      this.snapshot = null;
    }
  }
}
