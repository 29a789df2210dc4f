// A client whose requests never leave the process, after openapi-fetch's own
// tests (packages/openapi-fetch/test/helpers.ts, createObservedClient): every
// request the client sends is recorded and answered by `respond`. For client
// behaviour that needs no server (its middleware, how answers map to
// results, option checks); what a real server or mock does with the requests
// is tested against them (test/client.test.ts, test/contract-suite.test.ts).
import { createAgentdClient, type AgentdClient, type AgentdClientOptions } from "../../client/index.js";
import { BASE_PATH } from "../../server/contract.js";

export interface ObservedClient {
  client: AgentdClient;
  /** Every request the client sent, in order. */
  requests: Request[];
}

/** `.invalid` never resolves (RFC 2606): nothing can be reached even if `fetch` were bypassed. */
export const OBSERVED_BASE_URL = `https://agentd.invalid${BASE_PATH}`;

export function createObservedClient(
  respond: (request: Request) => Response | Promise<Response>,
  options: Partial<Omit<AgentdClientOptions, "fetch">> = {},
): ObservedClient {
  const requests: Request[] = [];
  const client = createAgentdClient({
    baseUrl: OBSERVED_BASE_URL,
    token: "observed-token",
    ...options,
    fetch: async (request) => {
      requests.push(request.clone());
      return respond(request);
    },
  });
  return { client, requests };
}
