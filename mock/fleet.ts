// The stateful mock's agents: the contract's `AgentList` example, in its
// example states, so the docs, both mocks and the screens built on them show
// the same agents; with `--agents N`, generated agents after them, every
// state in turn, up to exactly N.
import type { OpenApiDocument } from "../server/contract.js";
import type { AgentRecord, AgentStatus } from "../server/store/agent-store.js";

export const MAX_AGENTS = 100_000;

export interface Fleet {
  /** The deployment UUID the example agents carry, used as the mock's own. */
  originUuid: string;
  agents: AgentRecord[];
}

/** The agents of the contract's AgentList example, as records, and their origin UUID. */
export function exampleFleet(contract: OpenApiDocument): Fleet {
  const examples = (contract.components as { examples: Record<string, { value?: unknown }> }).examples;
  const list = examples.AgentList?.value as AgentStatus[] | undefined;
  const first = list?.[0];
  if (first === undefined) throw new Error("openapi.yaml has no AgentList example to start the mock from");
  return { originUuid: first.origin_uuid, agents: list!.map(({ origin_uuid: _, ...record }) => record) };
}

/** The generated agents' states, in turn: logged in, logged out, paused with and without a reason. */
const STATES: readonly ((id: number) => AgentRecord)[] = [
  (id) => ({ id, number: `${1000 + id}`, extension: `${1000 + id}`, context: "default", logged: true, paused: false, paused_reason: null, state_interface: `PJSIP/agent-${id}` }),
  (id) => ({ id, number: `${1000 + id}`, extension: null, context: null, logged: false, paused: false, paused_reason: null, state_interface: null }),
  (id) => ({ id, number: `${1000 + id}`, extension: `${1000 + id}`, context: "default", logged: true, paused: true, paused_reason: "training", state_interface: `PJSIP/agent-${id}` }),
  (id) => ({ id, number: `${1000 + id}`, extension: `${1000 + id}`, context: "sales", logged: true, paused: true, paused_reason: null, state_interface: `SIP/agent-${id}` }),
];

/** The example fleet followed by generated agents, `size` in all (at least the examples, at most MAX_AGENTS). */
export function sizedFleet(example: Fleet, size: number): Fleet {
  if (!Number.isInteger(size) || size < example.agents.length || size > MAX_AGENTS) {
    throw new RangeError(`must be a whole number from ${example.agents.length} (the example agents) to ${MAX_AGENTS}`);
  }
  // Generated ids and numbers start after the examples', so none repeats.
  const after = Math.max(...example.agents.map((agent) => agent.id), ...example.agents.map((agent) => Number(agent.number) - 1000));
  const generated = Array.from({ length: size - example.agents.length }, (_, i) => STATES[i % STATES.length]!(after + 1 + i));
  return { originUuid: example.originUuid, agents: [...example.agents, ...generated] };
}
