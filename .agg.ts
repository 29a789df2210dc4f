import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
const p = JSON.parse(readFileSync(process.argv[2]!, "utf8"));
const limit = Number(process.argv[3] ?? 1e9) * 1000;
const byId = new Map<number, any>(p.nodes.map((n: any) => [n.id, n]));
const fileMaps = new Map<string, string[]>();
function moduleAt(url: string, line: number): string { let map = fileMaps.get(url); if (!map) { map = []; let cur = "(chunk)"; for (const l of readFileSync(fileURLToPath(url), "utf8").split("\n")) { const m = /^\/\/ (node_modules\/(?:@[^/]+\/)?[^/]+|[a-z]+\/[^ ]*)/.exec(l); if (m) cur = m[1].startsWith("node_modules") ? m[1].slice(13) : m[1].split("/").slice(0, 2).join("/"); map.push(cur); } fileMaps.set(url, map); } return map[line] ?? "(chunk)"; }
function bucket(url: string, name: string, line: number) { if (url === "") return name.startsWith("(") ? name : "(native)"; if (url.includes("/dist/bin/")) return moduleAt(url, line); const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url); if (m) return m[1]; if (url.startsWith("node:")) return "node:" + url.slice(5).split("/")[0]; return url; }
let t = 0; const self = new Map<string, number>();
for (let i = 0; i < p.samples.length; i++) { t += p.timeDeltas[i]; if (t > limit) break; const n = byId.get(p.samples[i]); const b = bucket(n.callFrame.url, n.callFrame.functionName, n.callFrame.lineNumber); self.set(b, (self.get(b) ?? 0) + p.timeDeltas[i]); }
console.log([...self].sort((a, b) => b[1] - a[1]).slice(0, 30).map(([k, v]) => `${(v / 1000).toFixed(0).padStart(5)} ${k}`).join("\n"));
