// The JSON bodies the in-memory baselines send, computed once at start-up:
// exactly the bytes the real server sends for the same agents.
import { AGENT_COUNT, benchAgents, toStatus } from "../fixtures.js";

export interface Payloads {
  list: Buffer;
  byId: Map<string, Buffer>;
  byNumber: Map<string, Buffer>;
  /** Agent numbers that exist and are logged in (pause answers 204). */
  pausable: Set<string>;
  known: Set<string>;
}

/** The bodies for `count` agents: BENCH_AGENTS when the runner sets it (growth table), else the bench's 100. */
export function buildPayloads(count: number = Number(process.env.BENCH_AGENTS ?? AGENT_COUNT)): Payloads {
  const agents = benchAgents(count);
  const byId = new Map<string, Buffer>();
  const byNumber = new Map<string, Buffer>();
  for (const agent of agents) {
    const body = Buffer.from(JSON.stringify(toStatus(agent)));
    byId.set(String(agent.id), body);
    byNumber.set(agent.number, body);
  }
  return {
    list: Buffer.from(JSON.stringify(agents.map(toStatus))),
    byId,
    byNumber,
    pausable: new Set(agents.filter((a) => a.logged).map((a) => a.number)),
    known: new Set(agents.map((a) => a.number)),
  };
}

/** Port and TLS files from the environment the bench runner sets. */
export function targetEnv(): { port: number; cert: string; key: string } {
  const { BENCH_PORT, BENCH_CERT, BENCH_KEY } = process.env;
  if (!BENCH_PORT || !BENCH_CERT || !BENCH_KEY) throw new Error("BENCH_PORT, BENCH_CERT and BENCH_KEY must be set");
  return { port: Number(BENCH_PORT), cert: BENCH_CERT, key: BENCH_KEY };
}
