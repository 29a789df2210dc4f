import type { Metrics } from "../ops/metrics.js";
import type { Database, Sql } from "./sql.js";

/** Times every statement and transaction (failed ones too) into the metrics; the stores never know. */
export function instrumentedDatabase(db: Database, metrics: Metrics): Database {
  const timed = async <T>(run: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    let failed = true;
    try {
      const result = await run();
      failed = false;
      return result;
    } finally {
      metrics.dbQuery((performance.now() - started) / 1000, failed);
    }
  };
  const wrap = (sql: Sql): Sql => ({
    query: (text, params) => timed(() => sql.query(text, params)),
    // The transaction is timed as a whole; its statements are not counted twice.
    transaction: (fn) => timed(() => sql.transaction(fn)),
    copyIn: (table, columns, text) => timed(() => sql.copyIn(table, columns, text)),
  });
  return { kind: db.kind, ...wrap(db), close: () => db.close() };
}
