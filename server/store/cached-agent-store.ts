import type { AgentImportSource, AgentStatus, ImportOptions, ImportResult, AgentStore, PauseOutcome, UnpauseOutcome } from "./agent-store.js";

/** The fleet as this process knows it. Mutated in place by pauses and unpauses: no write copies it. */
interface Fleet {
  /** Every agent by id, in id order (loaded in that order; a pause replaces a value and keeps its place). */
  byId: Map<number, AgentStatus>;
  idByNumber: Map<string, number>;
  /** The list as last handed out; null once a pause changed an agent, rebuilt by the next list(). */
  list: AgentStatus[] | null;
}

/**
 * Serves reads from memory for a database that only this process writes:
 * the embedded PGlite database, which the data-directory lock gives to one
 * process, and whose every write (API, admin socket) goes through this
 * store. Reads then cost no query, and the cache is exact: a pause updates
 * the cached agent only after the database committed it.
 *
 * A pause costs the same whatever the fleet's size: it replaces one agent
 * in the maps and drops the list, which only the next GET /agents rebuilds.
 *
 * Not for PostgreSQL, where other instances write behind its back.
 */
export class CachedAgentStore implements AgentStore {
  private fleet: Promise<Fleet> | null = null;

  constructor(private readonly inner: AgentStore) {}

  get originUuid(): string {
    return this.inner.originUuid;
  }

  private load(): Promise<Fleet> {
    if (this.fleet === null) {
      const loading = this.inner.list().then(
        (list): Fleet => ({
          byId: new Map(list.map((agent) => [agent.id, agent])),
          idByNumber: new Map(list.map((agent) => [agent.number, agent.id])),
          list,
        }),
      );
      this.fleet = loading;
      // A failed load is not remembered: the next read asks the database again.
      loading.catch(() => {
        if (this.fleet === loading) this.fleet = null;
      });
    }
    return this.fleet;
  }

  async list(): Promise<AgentStatus[]> {
    const fleet = await this.load();
    // The same array object until the next pause, so its serialised body is reused too.
    fleet.list ??= [...fleet.byId.values()];
    return fleet.list;
  }

  async getById(id: number): Promise<AgentStatus | undefined> {
    return (await this.load()).byId.get(id);
  }

  async getByNumber(number: string): Promise<AgentStatus | undefined> {
    const fleet = await this.load();
    const id = fleet.idByNumber.get(number);
    return id === undefined ? undefined : fleet.byId.get(id);
  }

  async pause(number: string, reason: string | null): Promise<PauseOutcome> {
    const outcome = await this.inner.pause(number, reason);
    if (outcome === "paused") await this.applyCommitted(number, { paused: true, paused_reason: reason });
    return outcome;
  }

  async unpause(number: string): Promise<UnpauseOutcome> {
    const outcome = await this.inner.unpause(number);
    if (outcome === "unpaused") await this.applyCommitted(number, { paused: false, paused_reason: null });
    return outcome;
  }

  /** Applies a change the database has just committed to the cached agent, if the fleet is loaded or loading. */
  private async applyCommitted(number: string, change: Pick<AgentStatus, "paused" | "paused_reason">): Promise<void> {
    const loaded = this.fleet;
    if (loaded === null) return;
    // After the load, if one is under way: a load that read the table
    // before this commit gets the change applied, one that read it after
    // already has it. Only changes the database wrote are applied, and
    // they resolve in commit order (PGlite runs one statement at a time),
    // so the last committed state wins here too. An "unchanged" outcome is
    // never applied: its answer may come after a later change committed
    // (it asks the database a second question), and the cache already
    // holds the state it found.
    await loaded.then(
      (fleet) => {
        const id = fleet.idByNumber.get(number);
        const old = id === undefined ? undefined : fleet.byId.get(id);
        if (old === undefined) return;
        // A new object, never a mutation: a response may be serialising the old one.
        fleet.byId.set(old.id, { ...old, ...change });
        fleet.list = null;
      },
      // A failed load was dropped by load(): the next read asks the database.
      () => undefined,
    );
  }

  async upsert(agents: AgentImportSource, options?: ImportOptions): Promise<ImportResult> {
    try {
      return await this.inner.upsert(agents, options);
    } finally {
      // Whether or not it committed, the next read asks the database.
      this.fleet = null;
    }
  }
}
