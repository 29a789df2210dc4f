// This file is generated from openapi.yaml by `npm run generate`. Do not edit it by hand.

/** Every operation of the contract, keyed by operationId. */
export const operations = {
  listAgents: {
    method: "get",
    path: "/agents",
    requiredAcl: "agentd.agents.read",
  },
  getAgentById: {
    method: "get",
    path: "/agents/by-id/{agent_id}",
    requiredAcl: "agentd.agents.by-id.{agent_id}.read",
  },
  getAgentByNumber: {
    method: "get",
    path: "/agents/by-number/{agent_number}",
    requiredAcl: "agentd.agents.by-number.{agent_number}.read",
  },
  pauseAgentByNumber: {
    method: "post",
    path: "/agents/by-number/{agent_number}/pause",
    requiredAcl: "agentd.agents.by-number.{agent_number}.pause.create",
  },
} as const;

export type OperationId = keyof typeof operations;
