import type { AgentImportSource, AgentStatus, ImportOptions, ImportResult, AgentStore, PauseOutcome, UnpauseOutcome } from "./agent-store.js";

/** An agent store that can say, in one tiny query, whether the agents changed. */
export interface VersionedAgentStore extends AgentStore {
  /** Equal on two reads only if no write to the agents committed in between. */
  dataVersion(): Promise<string>;
}

interface ListAtVersion {
  version: string;
  list: Promise<AgentStatus[]>;
}

/**
 * Keeps the list of agents for a database other processes write too
 * (PostgreSQL, shared by several instances and the CLI), and reuses it while
 * the data version is unchanged. Every list() reads the version first, so a
 * read that starts after any instance's write committed sees the version
 * move and reads the table again: never an older list. The version is read
 * before the rows, so a list may be newer than its version (then the next
 * read merely reloads), never older.
 *
 * The same array object is returned while it is current, so its serialised
 * body is reused as well (see http/reply.ts). Single-agent reads and writes
 * go straight to the database: one indexed query either way, which a
 * version check would not make cheaper.
 */
export class VersionedListStore implements AgentStore {
  /** The newest list asked for, loaded or loading. */
  private latest: ListAtVersion | null = null;

  constructor(private readonly inner: VersionedAgentStore) {}

  get originUuid(): string {
    return this.inner.originUuid;
  }

  async list(): Promise<AgentStatus[]> {
    const version = await this.inner.dataVersion();
    const latest = this.latest;
    // Concurrent readers of one version share one load.
    if (latest !== null && latest.version === version) return latest.list;
    const entry: ListAtVersion = { version, list: this.inner.list() };
    this.latest = entry;
    // A failed load is not kept: the next read asks the database again.
    entry.list.catch(() => {
      if (this.latest === entry) this.latest = null;
    });
    return entry.list;
  }

  getById(id: number): Promise<AgentStatus | undefined> {
    return this.inner.getById(id);
  }

  getByNumber(number: string): Promise<AgentStatus | undefined> {
    return this.inner.getByNumber(number);
  }

  pause(number: string, reason: string | null): Promise<PauseOutcome> {
    return this.inner.pause(number, reason);
  }

  unpause(number: string): Promise<UnpauseOutcome> {
    return this.inner.unpause(number);
  }

  upsert(agents: AgentImportSource, options?: ImportOptions): Promise<ImportResult> {
    return this.inner.upsert(agents, options);
  }
}
