// The store's import: agents inserted or replaced by id, all in one
// transaction, from a whole array or from batches that a reader checks as
// it goes (agent-import-reader.ts).
import { copyText } from "../db/copy-text.js";
import type { Sql } from "../db/sql.js";
import { InvalidImportError, type AgentImportSource, type AgentRecord, type ImportOptions, type ImportResult } from "./agent-store.js";

// An import replaces each agent it names (by id) and leaves the others as
// they are. Per batch of agents: one COPY of its rows, PostgreSQL's own bulk
// path (cheaper per row than an INSERT … ON CONFLICT, which
// checks and inserts each row on its own), after one DELETE of those of its
// ids that may already be stored. Numbers may move between agents across
// batches: their uniqueness is checked at commit (agents_number_key is
// deferred).
const COPY_COLUMNS = ["id", "number", "extension", "context", "logged", "paused", "paused_reason", "state_interface"] as const;
const DELETE_BATCH = "DELETE FROM agents WHERE id = ANY($1::integer[])";
// With `replace`, after the last batch: the agents the source did not name, counted.
const DELETE_OTHERS = `WITH removed AS (DELETE FROM agents WHERE NOT (id = ANY($1::integer[])) RETURNING 1)
  SELECT count(*)::int AS removed FROM removed`;
const NOTHING_TO_REPLACE_WITH = "the file names no agent: replacing the fleet with it would remove every agent";
// The ids stored before the import lie in this range (both null: none).
const STORED_IDS = "SELECT min(id) AS low, max(id) AS high FROM agents";

// Agents per batch of an array: each statement stays well within the
// statement time-out whatever the fleet, and a 100,000-agent import is a
// handful of round trips.
const BATCH_SIZE = 10_000;

// An import takes the table for itself until it commits. Pauses wait for it
// (they would wait anyway for every row the import touches), and they can
// no longer deadlock with it over the data-version counters that each
// statement's trigger bumps: a pause locks its agent's row, then a counter;
// a batched import holds counters from its first batch while it goes on
// locking rows. Two imports run one after the other.
const LOCK_FOR_IMPORT = "LOCK TABLE agents IN SHARE ROW EXCLUSIVE MODE";

/** A batch ready to send: the ids to delete first (maybe none), and the rows in COPY's text format. */
interface PreparedBatch {
  replaced: number[];
  rows: string;
}

/**
 * Inserts or replaces agents by id, in one transaction, which a source that
 * throws rolls back; with `replace`, removes the others in it too.
 */
export async function importAgents(sql: Sql, agents: AgentImportSource, { replace = false }: ImportOptions = {}): Promise<ImportResult> {
  // Replacing the fleet with none is refused in the transaction, below.
  if (isArray(agents) && agents.length === 0 && !replace) return { removed: 0 };
  // The batches as the source gave them, in file order: kept only to name
  // the agents whose number another agent keeps, if the commit refuses them.
  const given: (readonly AgentRecord[])[] = [];
  try {
    return await writeInOneTransaction(sql, agents, given, replace);
  } catch (error) {
    if (!isNumberTaken(error)) throw error;
    const problems = await numbersKeptByOthers(sql, given);
    throw problems.length > 0 ? new InvalidImportError(problems) : error;
  }
}

async function writeInOneTransaction(sql: Sql, agents: AgentImportSource, given: (readonly AgentRecord[])[], replace: boolean): Promise<ImportResult> {
  return sql.transaction(async (tx) => {
    await tx.query(LOCK_FOR_IMPORT);
    // Only an id that may be stored needs deleting first: one in the range
    // of those stored before (the table is locked), or one an earlier batch
    // of this import wrote. Into an empty table, an import is COPY alone.
    const [stored] = await tx.query<{ low: number | null; high: number | null }>(STORED_IDS);
    const low = stored?.low ?? Infinity;
    const high = stored?.high ?? -Infinity;
    // The batch (counted from 1) that last wrote each id.
    const writtenBy = new Map<number, number>();
    let batches = 0;

    const prepare = (batch: readonly AgentRecord[]): PreparedBatch => {
      given.push(batch);
      const current = ++batches;
      const replaced: number[] = [];
      let repeated = false;
      for (const { id } of batch) {
        const by = writtenBy.get(id);
        if (by === current) repeated = true;
        else if (by !== undefined || (id >= low && id <= high)) replaced.push(id);
        writtenBy.set(id, current);
      }
      // One row per id, the last one winning, as one statement per agent did.
      const rows = repeated ? [...new Map(batch.map((agent) => [agent.id, agent])).values()] : batch;
      return { replaced, rows: copyText(rows, COPY_COLUMNS) };
    };
    const send = async ({ replaced, rows }: PreparedBatch) => {
      if (replaced.length > 0) await tx.query(DELETE_BATCH, [replaced]);
      await tx.copyIn("agents", COPY_COLUMNS, rows);
    };
    await writeEach(isArray(agents) ? batchesOf(agents, BATCH_SIZE) : agents, prepare, send);
    // Before the commit, where the numbers' uniqueness is checked: a number
    // held by an agent the source does not name is free again by then.
    if (!replace) return { removed: 0 };
    // Thrown inside the transaction: a source that was read whole but named no agent writes nothing.
    if (writtenBy.size === 0) throw new InvalidImportError([NOTHING_TO_REPLACE_WITH]);
    const [row] = await tx.query<{ removed: number }>(DELETE_OTHERS, [[...writtenBy.keys()]]);
    return { removed: row?.removed ?? 0 };
  });
}

/** The commit's refusal of a number that two agents would have (the check is deferred to it). */
function isNumberTaken(error: unknown): boolean {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  return code === "23505" && constraint === "agents_number_key";
}

// Stored agents that the file does not name, with a number the file gives
// to another agent. The file has no duplicates of its own (the reader
// refused them), so these are every conflict, and the import rolled back:
// read after it, they are as they were before.
const NUMBERS_KEPT = `SELECT number, id FROM agents
  WHERE number = ANY($1::text[]) AND NOT (id = ANY($2::integer[]))`;

/** Each agent of the file whose number a stored agent not in the file keeps, as the reader words a problem. */
async function numbersKeptByOthers(sql: Sql, given: readonly (readonly AgentRecord[])[]): Promise<string[]> {
  const file = given.flat();
  const rows = await sql.query<{ number: string; id: number }>(NUMBERS_KEPT, [file.map((a) => a.number), file.map((a) => a.id)]);
  const keptBy = new Map(rows.map((row) => [row.number, row.id]));
  const problems: string[] = [];
  file.forEach((agent, index) => {
    const id = keptBy.get(agent.number);
    if (id !== undefined) problems.push(`[${index}].number: number ${JSON.stringify(agent.number)} is kept by agent ${id}, which the file does not name`);
  });
  return problems;
}

function isArray(source: AgentImportSource): source is readonly AgentRecord[] {
  return Array.isArray(source);
}

function* batchesOf<T>(items: readonly T[], size: number): Generator<readonly T[]> {
  for (let start = 0; start < items.length; start += size) yield items.slice(start, start + size);
}

/**
 * Sends each batch as it comes, and keeps the database busy: while one
 * batch is being stored, the next is read from the source (the import's
 * validation) and prepared, so on PostgreSQL this process and the database
 * work on two cores at once. A send that fails stops the sending, but the
 * source is still read to its end, so that its own failure (an invalid
 * file) is the one reported, as when the whole file was checked before the
 * first write.
 */
async function writeEach<T, P>(source: Iterable<T> | AsyncIterable<T>, prepare: (batch: T) => P, send: (prepared: P) => Promise<void>): Promise<void> {
  const iterator = Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : source[Symbol.iterator]();
  let failure: { error: unknown } | undefined;
  let sending: Promise<void> = Promise.resolve();
  let next = Promise.resolve(iterator.next());
  for (;;) {
    let result: IteratorResult<T>;
    try {
      result = await next;
    } catch (error) {
      // The connection must be idle before the transaction rolls back.
      await sending;
      throw error;
    }
    if (result.done === true) break;
    const prepared = failure ? undefined : prepare(result.value);
    // The connection takes one statement at a time.
    await sending;
    if (prepared !== undefined && !failure) sending = send(prepared).catch((error: unknown) => void (failure = { error }));
    next = Promise.resolve(iterator.next());
    // Awaited at the top of the loop; until then its rejection is not unhandled.
    next.catch(() => undefined);
  }
  await sending;
  if (failure) throw failure.error;
}
