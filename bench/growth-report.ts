// The growth table as Markdown, with the ratios and goals of issue 11.
import type { GrowthResult, GrowthServerResult, GrowthStore } from "./growth.js";

const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : "–");
const ratio = (a: number | undefined | null, b: number | undefined | null) =>
  a === undefined || a === null || b === undefined || b === null || !Number.isFinite(a) || !Number.isFinite(b) || b === 0 ? NaN : a / b;
const STORE_LABEL: Record<GrowthStore, string> = { pglite: "PGlite", postgres: "PostgreSQL" };

export function growthReport(result: GrowthResult): string {
  const { settings } = result;
  const lines: string[] = [
    `Growth run ${result.date}: ${settings.connections} connections, ${settings.warmupSeconds} s warm-up, ${settings.rounds} round(s) of ${settings.durationSeconds} s per cell; medians.`,
    "",
    "| agents | target | GET /agents req/s | × limit | by number req/s | pause req/s | import s | import rows/s | × COPY | peak RSS MiB |",
    "|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|",
  ];
  const copyRate = (size: number) => ratio(size, (result.copyMs[size] ?? NaN) / 1000);
  for (const size of settings.sizes) {
    const limit = result.limit[size];
    const connections = result.listConnections[size];
    const listNote = connections !== undefined && connections !== settings.connections ? ` (GET /agents with ${connections} connections)` : "";
    lines.push(`| ${size} | limit: bare node:https, same bytes${listNote} | ${fixed(limit ?? NaN, 0)} | 1.00 | | | | | | |`);
    for (const row of result.servers.filter((r) => r.agents === size)) {
      const rate = ratio(size, row.importMs / 1000);
      const failures = Object.values(row.failures).reduce((a, b) => a + b, 0);
      lines.push(
        `| ${size} | ${STORE_LABEL[row.store]}${failures > 0 ? ` (${failures} failed answers)` : ""} | ${fixed(row.rps.list, 0)} | ${fixed(ratio(row.rps.list, limit), 2)} | ${fixed(row.rps.byNumber, 0)} | ${fixed(row.rps.pause, 0)} | ${fixed(row.importMs / 1000, 2)} | ${fixed(rate, 0)} | ${row.store === "postgres" ? fixed(ratio(rate, copyRate(size)), 2) : ""} | ${row.peakRssMiB === null ? "–" : fixed(row.peakRssMiB, 0)} |`,
      );
    }
    if (result.copyMs[size] !== undefined) {
      lines.push(`| ${size} | psql \\copy into PostgreSQL | | | | | ${fixed(result.copyMs[size] / 1000, 2)} | ${fixed(copyRate(size), 0)} | 1.00 | |`);
    }
  }

  const smallest = Math.min(...settings.sizes);
  const largest = Math.max(...settings.sizes);
  const row = (store: GrowthStore, size: number): GrowthServerResult | undefined =>
    result.servers.find((r) => r.store === store && r.agents === size);
  const verdict = (value: number, ok: (v: number) => boolean) => (Number.isFinite(value) ? (ok(value) ? "met" : "MISSED") : "not measured");
  lines.push("", `| goal (issue 11) | measured | verdict |`, "|---|---|---|");
  for (const store of ["pglite", "postgres"] as const) {
    for (const op of ["pause", "byNumber"] as const) {
      const r = ratio(row(store, largest)?.rps[op], row(store, smallest)?.rps[op]);
      lines.push(`| ${STORE_LABEL[store]}: ${op === "pause" ? "pause" : "by number"} at ${largest} ≥ 0.8× at ${smallest} | ${fixed(r, 2)}× | ${verdict(r, (v) => v >= 0.8)} |`);
    }
  }
  const listSize = settings.sizes.includes(10_000) ? 10_000 : largest;
  const list = ratio(row("postgres", listSize)?.rps.list, result.limit[listSize]);
  lines.push(`| PostgreSQL: GET /agents at ${listSize} ≥ 0.6× the limit | ${fixed(list, 2)}× | ${verdict(list, (v) => v >= 0.6)} |`);
  const pgImport = row("postgres", largest);
  const imported = ratio(pgImport === undefined ? NaN : largest / (pgImport.importMs / 1000), copyRate(largest));
  lines.push(`| PostgreSQL: import at ${largest} ≥ 0.5× psql \\copy throughput | ${fixed(imported, 2)}× | ${verdict(imported, (v) => v >= 0.5)} |`);
  for (const store of ["pglite", "postgres"] as const) {
    const r = ratio(row(store, largest)?.peakRssMiB, row(store, smallest)?.peakRssMiB);
    lines.push(`| ${STORE_LABEL[store]}: peak RSS at ${largest} ≤ 2× at ${smallest} | ${fixed(r, 2)}× | ${verdict(r, (v) => v <= 2)} |`);
  }
  for (const note of result.notes) lines.push(`Note: ${note}`);
  return lines.join("\n") + "\n";
}
