// The embedded database alone, the baseline of the bench's cold start: opens
// PGlite on an existing data directory exactly as the server does (the
// server's own openPglite from dist/, so the same settings), answers one
// query and prints "answered", then its resident memory as JSON, and exits.
// Plain JavaScript run by plain node: nothing but PGlite's own start is
// measured.
//
//   node bench/targets/pglite-alone.js <data dir>
import { openPglite } from "../../dist/server/db/pglite.js";

const dataDir = process.argv[2];
if (dataDir === undefined) throw new Error("usage: node bench/targets/pglite-alone.js <data dir>");
const db = await openPglite(dataDir);
await db.query("SELECT 1");
process.stdout.write("answered\n");
// Resident memory now (bytes) and at its peak (maxRSS, in kB).
const rssMiB = process.memoryUsage.rss() / 1024 / 1024;
const peakMiB = process.resourceUsage().maxRSS / 1024;
process.stdout.write(`${JSON.stringify({ rssMiB, peakMiB })}\n`);
await db.close();
