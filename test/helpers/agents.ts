// Agents for tests, built by state, so a suite says which agents it needs
// instead of spelling out nine fields (or relying on agentd's demo seed).
//
//   loggedIn(7)                  → number "1007", extension "1007", not paused
//   loggedOut(8, "500")          → number "500", every line field null
//   paused(9, "lunch break")     → logged in, paused with that reason
import type { AgentRecord } from "../../server/store/agent-store.js";

/** A logged-in agent, not paused; its number defaults to 1000 + id and is also its extension. */
export function loggedIn(id: number, number = String(1000 + id)): AgentRecord {
  return {
    id,
    number,
    extension: number,
    context: "default",
    logged: true,
    paused: false,
    paused_reason: null,
    state_interface: `PJSIP/agent${id}`,
  };
}

/** A logged-out agent: not paused, and no extension, context or interface (the contract's rule). */
export function loggedOut(id: number, number = String(1000 + id)): AgentRecord {
  return {
    id,
    number,
    extension: null,
    context: null,
    logged: false,
    paused: false,
    paused_reason: null,
    state_interface: null,
  };
}

/** A logged-in agent that is paused, with a reason or without one (null). */
export function paused(id: number, reason: string | null = null, number = String(1000 + id)): AgentRecord {
  return { ...loggedIn(id, number), paused: true, paused_reason: reason };
}

/**
 * The agents a server suite loads before its tests
 * (`useTestServer({ agents: suiteAgents() })`), one per role the tests need.
 * Test servers start on an empty database (startTestServer, and
 * test/helpers/data-dir.ts for spawned ones), never on agentd's demo seed, so
 * the server then holds exactly these (test/server-api.test.ts checks it);
 * their ids (1 to 6) need not match anything else. Numbers are 1000 + id.
 */
export const SUITE_AGENTS = {
  /** Logged in, not paused: the agent tests pause. */
  pausable: loggedIn(1),
  /** Logged out: pausing it is a 409 that changes nothing. */
  away: loggedOut(2),
  /** Paused with a reason. */
  onBreak: paused(3, "lunch break"),
  /** Paused without a reason. */
  pausedSilently: paused(4),
  /** Logged in, not paused: for tests that check a refused request changed nothing. */
  bystander: loggedIn(5),
  /** Logged out too. */
  offline: loggedOut(6),
} as const satisfies Record<string, AgentRecord>;

/** SUITE_AGENTS as a list in id order, as an import file holds them. */
export function suiteAgents(): AgentRecord[] {
  return Object.values(SUITE_AGENTS)
    .map((agent) => ({ ...agent }))
    .sort((a, b) => a.id - b.id);
}
