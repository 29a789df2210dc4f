// What every target serves: the same 100 agents, the same origin UUID and
// the same certificate, so the bytes on the wire are identical and only the
// machinery in front of them differs.
import { loadOrCreateCertificate } from "../server/tls/certificate.js";
import type { AgentRecord, AgentStatus } from "../server/store/agent-store.js";

/** AGENTD_ORIGIN_UUID of every bench deployment. */
export const ORIGIN_UUID = "6f0f1c2e-3b4a-4c5d-8e9f-0a1b2c3d4e5f";
/** AGENTD_ADMIN_TOKEN (ACL agentd.#) of every bench deployment, and the token the auth service knows. */
export const BENCH_TOKEN = "bench-token-0123456789abcdefghij";
export const AGENT_COUNT = 100;
/**
 * The agent read by id/number and paused. It is seeded already paused with
 * PAUSE_REASON, so pausing it again leaves every payload byte-identical to
 * the in-memory baselines for the whole run.
 */
export const HOT_AGENT_ID = 42;
export const HOT_AGENT_NUMBER = String(1000 + HOT_AGENT_ID);
export const PAUSE_REASON = "bench";
export const PAUSE_BODY = JSON.stringify({ reason: PAUSE_REASON });

/** `count` agents (the growth table uses 100 to 100,000), the same pattern whatever the count. */
export function benchAgents(count: number = AGENT_COUNT): AgentRecord[] {
  if (count < HOT_AGENT_ID) throw new Error(`the bench needs at least ${HOT_AGENT_ID} agents`);
  const agents: AgentRecord[] = [];
  for (let id = 1; id <= count; id++) {
    const logged = id % 5 !== 0 || id === HOT_AGENT_ID;
    const paused = logged && (id % 3 === 0 || id === HOT_AGENT_ID);
    agents.push({
      id,
      number: String(1000 + id),
      extension: logged ? String(2000 + id) : null,
      context: logged ? (id % 2 === 0 ? "sales" : "default") : null,
      logged,
      paused,
      paused_reason: id === HOT_AGENT_ID ? PAUSE_REASON : paused && id % 2 === 0 ? "lunch break" : null,
      state_interface: logged ? `PJSIP/agent${id}` : null,
    });
  }
  return agents;
}

/** The contract's AgentStatus, fields in the order the server's store emits them. */
export function toStatus(agent: AgentRecord): AgentStatus {
  return {
    id: agent.id,
    origin_uuid: ORIGIN_UUID,
    number: agent.number,
    extension: agent.extension,
    context: agent.context,
    logged: agent.logged,
    paused: agent.paused,
    paused_reason: agent.paused_reason,
    state_interface: agent.state_interface,
  };
}

export interface CertFiles {
  certPath: string;
  keyPath: string;
  cert: string;
}

/**
 * One self-signed certificate for localhost and 127.0.0.1, used by every
 * HTTPS target (AGENTD_TLS_CERT/KEY for the server): the server's own
 * generator, writing `<dir>/tls/cert.pem` and `key.pem`.
 */
export async function writeCertificate(dir: string): Promise<CertFiles> {
  const { cert, certPath, keyPath } = await loadOrCreateCertificate({ dataDir: dir });
  return { certPath, keyPath, cert };
}

/** The four operations as the contract's paths, below the base path (Prism serves them without it). */
export const OPERATIONS = {
  list: { method: "GET", path: "/agents", label: "GET /agents (100)" },
  byId: { method: "GET", path: `/agents/by-id/${HOT_AGENT_ID}`, label: "GET by id" },
  byNumber: { method: "GET", path: `/agents/by-number/${HOT_AGENT_NUMBER}`, label: "GET by number" },
  pause: { method: "POST", path: `/agents/by-number/${HOT_AGENT_NUMBER}/pause`, label: "POST pause (reason)" },
} as const;
export type OperationName = keyof typeof OPERATIONS;
