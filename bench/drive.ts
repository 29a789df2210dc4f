// The load generator, run as its own process (pinned to its own core by the
// runner): one autocannon run against one target and operation, the answer
// as one JSON line on stdout.
//
// Latency: autocannon's own histogram has 1 ms buckets, too coarse for
// sub-millisecond answers, so every response time is also kept here (in ms,
// from autocannon's hrtime measurement) and the percentiles are computed
// from those.
//
// TLS: autocannon 9 always connects with rejectUnauthorized: false
// (lib/httpClient.js), whatever tlsOptions says. The runner therefore checks
// each target's certificate itself, with verification on, before any load.
import autocannon, { type Client } from "autocannon";

export interface DriveSpec {
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
  /** Bodies sent in turn by each connection instead of `body` (e.g. two reasons, so every pause changes state). */
  bodies?: string[];
  /**
   * Paths on `url`'s origin, one per connection in turn (connection i sends
   * every request to paths[i % length]): e.g. each connection pauses its own
   * agent, as operators each pause theirs.
   */
  paths?: string[];
  connections: number;
  durationSeconds: number;
  /** The status every answer must have; anything else is counted as unexpected. */
  expectStatus: number;
}

export interface DriveResult {
  /** Answers with the expected status per second of the run. */
  rps: number;
  p50: number;
  p99: number;
  expected: number;
  unexpected: number;
  /** Status code → count, for the answers that were not expected. */
  unexpectedStatuses: Record<string, number>;
  errors: number;
  timeouts: number;
  seconds: number;
  /** Filled in by the runner: the target process's CPU time (user + system) per expected answer, in µs. */
  cpuUsPerAnswer?: number;
}

function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[index]!;
}

function onePathPerConnection(spec: DriveSpec, paths: string[]): (client: Client) => void {
  let next = 0;
  return (client) => {
    const path = paths[next++ % paths.length]!;
    const bodies = spec.bodies ?? [spec.body];
    client.setRequests(bodies.map((body) => ({ method: spec.method, path, headers: spec.headers, ...(body === undefined ? {} : { body }) })));
  };
}

async function drive(spec: DriveSpec): Promise<DriveResult> {
  let times = new Float64Array(1 << 20);
  let count = 0;
  let expected = 0;
  const unexpectedStatuses: Record<string, number> = {};
  const started = process.hrtime.bigint();
  const result = await new Promise<import("autocannon").Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url,
        method: spec.method,
        headers: spec.headers,
        ...(spec.body === undefined ? {} : { body: spec.body }),
        ...(spec.bodies === undefined ? {} : { requests: spec.bodies.map((body) => ({ body })) }),
        connections: spec.connections,
        pipelining: 1,
        ...(spec.paths === undefined ? {} : { setupClient: onePathPerConnection(spec, spec.paths) }),
        duration: spec.durationSeconds,
        timeout: 10,
      },
      (err: Error | null, res) => (err ? reject(err) : resolve(res)),
    );
    instance.on("response", (_client: unknown, status: number, _bytes: number, ms: number) => {
      if (status !== spec.expectStatus) {
        unexpectedStatuses[status] = (unexpectedStatuses[status] ?? 0) + 1;
        return;
      }
      expected++;
      if (count === times.length) {
        const bigger = new Float64Array(times.length * 2);
        bigger.set(times);
        times = bigger;
      }
      times[count++] = ms;
    });
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const sorted = times.subarray(0, count).sort();
  return {
    rps: expected / Math.min(seconds, result.duration || seconds),
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    expected,
    unexpected: Object.values(unexpectedStatuses).reduce((a, b) => a + b, 0),
    unexpectedStatuses,
    errors: result.errors,
    timeouts: result.timeouts,
    seconds: result.duration,
  };
}

const spec = JSON.parse(process.argv[2] ?? "null") as DriveSpec | null;
if (spec === null) {
  process.stderr.write("usage: drive.ts '<json spec>'\n");
  process.exit(2);
}
drive(spec).then(
  (result) => process.stdout.write(JSON.stringify(result) + "\n"),
  (err: unknown) => {
    process.stderr.write(`drive failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
