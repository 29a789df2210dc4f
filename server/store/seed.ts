import type { AgentRecord, AgentStore } from "./agent-store.js";

/** Demo agents covering every state, so a fresh `npm start` shows real data. */
export const DEMO_AGENTS: readonly AgentRecord[] = [
  { id: 1, number: "1001", extension: "1001", context: "default", logged: true, paused: false, paused_reason: null, state_interface: "PJSIP/alice" },
  { id: 2, number: "1002", extension: null, context: null, logged: false, paused: false, paused_reason: null, state_interface: null },
  { id: 3, number: "1003", extension: "1003", context: "default", logged: true, paused: true, paused_reason: "lunch break", state_interface: "SIP/carol" },
  { id: 4, number: "1004", extension: "2004", context: "sales", logged: true, paused: true, paused_reason: null, state_interface: "PJSIP/dave" },
  { id: 5, number: "1005", extension: "2005", context: "sales", logged: true, paused: false, paused_reason: null, state_interface: "PJSIP/erin" },
  { id: 6, number: "1006", extension: null, context: null, logged: false, paused: false, paused_reason: null, state_interface: null },
];

/** Inserts (or resets) the demo agents; the serve command calls it on a brand-new embedded database. */
export async function seedDemoAgents(store: AgentStore): Promise<void> {
  await store.upsert(DEMO_AGENTS);
}

