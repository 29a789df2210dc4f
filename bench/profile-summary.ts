// Summarises a V8 .cpuprofile (from `npm run bench -- --cpu-prof DIR`): self
// time by package or project folder, and the hottest functions, so a hot
// spot can be named without opening DevTools.
//
//   npx tsx bench/profile-summary.ts /tmp/prof/CPU.*.cpuprofile [--top 25] [--skip 10]
//
// Percentages are of busy time: "(idle)" samples (the server waiting while
// other targets are measured) are left out. --skip drops the first seconds
// of the profile (start-up: module loading, certificate, migrations).
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** node_modules/<pkg> (scoped too), a project folder (dist/server/http), node: internals, or V8's own buckets. */
function bucket(url: string, name: string): string {
  if (url === "") return name.startsWith("(") ? name : "(native)";
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.startsWith("node:")) return url.split("/")[0]!.replace(/:.*/, ":") + url.slice(5).split("/")[0];
  const project = /\/(dist\/[^/]+\/[^/]+|bench)\//.exec(url);
  return project ? project[1]! : url;
}

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: "string", default: "25" }, skip: { type: "string", default: "0" } } });
for (const file of positionals) {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  const skipMicros = Number(values.skip) * 1e6;
  let total = 0;
  let idle = 0;
  let clock = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    clock += dt;
    if (clock < skipMicros) return;
    if (byId.get(id)?.callFrame.functionName === "(idle)") {
      idle += dt;
      return;
    }
    self.set(id, (self.get(id) ?? 0) + dt);
    total += dt;
  });
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  // Inclusive: a sample counts once for every package on its stack (a
  // middleware's time including what it calls, e.g. the validator with ajv).
  const inclusive = new Map<string, number>();
  for (const [id, micros] of self) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      if (frame.url !== "") seen.add(bucket(frame.url, frame.functionName));
    }
    for (const b of seen) inclusive.set(b, (inclusive.get(b) ?? 0) + micros);
  }
  const buckets = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, micros] of self) {
    const node = byId.get(id)!;
    const { functionName, url, lineNumber } = node.callFrame;
    const b = bucket(url, functionName);
    buckets.set(b, (buckets.get(b) ?? 0) + micros);
    const fn = `${functionName || "(anonymous)"} ${url ? `${url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*?\/(dist|bench)\//, "$1/")}:${lineNumber + 1}` : ""}`;
    functions.set(fn, (functions.get(fn) ?? 0) + micros);
  }
  const pct = (micros: number) => `${((100 * micros) / total).toFixed(1).padStart(5)} %`;
  const top = Number(values.top);
  process.stdout.write(`${file}: ${(total / 1e6).toFixed(1)} s busy, ${(idle / 1e6).toFixed(1)} s idle (after skipping ${values.skip} s); percentages of busy time\n\nSelf time by package / folder:\n`);
  for (const [name, micros] of [...buckets].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`  ${pct(micros)}  ${name}\n`);
  process.stdout.write("\nInclusive time by package / folder (on the stack):\n");
  for (const [name, micros] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`  ${pct(micros)}  ${name}\n`);
  process.stdout.write("\nHottest functions (self time):\n");
  for (const [name, micros] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`  ${pct(micros)}  ${name}\n`);
  process.stdout.write("\n");
}
