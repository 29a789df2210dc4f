// This file is generated from openapi.yaml by `npm run generate`. Do not edit it by hand.

/** Every operation of the contract, keyed by operationId. */
export const operations = {
  listAgents: {
    method: "get",
    path: "/agents",
  },
  getAgentById: {
    method: "get",
    path: "/agents/by-id/{agent_id}",
  },
  getAgentByNumber: {
    method: "get",
    path: "/agents/by-number/{agent_number}",
  },
  pauseAgentByNumber: {
    method: "post",
    path: "/agents/by-number/{agent_number}/pause",
  },
  unpauseAgentByNumber: {
    method: "post",
    path: "/agents/by-number/{agent_number}/unpause",
  },
} as const;

export type OperationId = keyof typeof operations;
