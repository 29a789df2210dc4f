import { Router, type Request } from "express";
import type { operations as OperationTypes } from "../../generated/openapi.js";
import { operations } from "../../generated/operations.js";
import type { AgentOperations, Refusal } from "../store/agent-store.js";
import { HttpProblem } from "./errors.js";
import { reply } from "./reply.js";

type PathParams<O extends keyof OperationTypes> = OperationTypes[O]["parameters"]["path"];
type PauseBody = NonNullable<OperationTypes["pauseAgentByNumber"]["requestBody"]>["content"]["application/json"];

/** Contract paths use `{name}`; Express routes use `:name`. */
function route(path: string): string {
  return path.replace(/\{([^}]+)\}/g, ":$1");
}

// The validator has already checked every parameter against the contract, so
// these only convert, never validate.
function agentId(req: Request): PathParams<"getAgentById">["agent_id"] {
  return Number(req.params.agent_id);
}
function agentNumber(req: Request): PathParams<"getAgentByNumber">["agent_number"] {
  return String(req.params.agent_number);
}

const noSuchAgent = () => new HttpProblem(404, "no such agent");

/** The contract's answer to a pause or unpause the store refused. */
function refusal(outcome: Refusal): HttpProblem {
  return outcome === "no such agent" ? noSuchAgent() : new HttpProblem(409, "not logged in");
}

/** The five operations of the contract. Requests reach them validated and authorised. */
export function agentRoutes(store: AgentOperations): Router {
  const router = Router({ caseSensitive: true });

  router.get(route(operations.listAgents.path), async (_req, res) => {
    reply(res, "listAgents", 200, await store.list());
  });

  router.get(route(operations.getAgentById.path), async (req, res) => {
    const agent = await store.getById(agentId(req));
    if (!agent) throw noSuchAgent();
    reply(res, "getAgentById", 200, agent);
  });

  router.get(route(operations.getAgentByNumber.path), async (req, res) => {
    const agent = await store.getByNumber(agentNumber(req));
    if (!agent) throw noSuchAgent();
    reply(res, "getAgentByNumber", 200, agent);
  });

  router.post(route(operations.pauseAgentByNumber.path), async (req, res) => {
    const body = req.body as PauseBody | undefined;
    const outcome = await store.pause(agentNumber(req), body?.reason ?? null);
    if (outcome !== "paused" && outcome !== "unchanged") throw refusal(outcome);
    reply(res, "pauseAgentByNumber", 204);
  });

  // The body, if any, is `{}` (the validator refused anything else): nothing to read.
  router.post(route(operations.unpauseAgentByNumber.path), async (req, res) => {
    const outcome = await store.unpause(agentNumber(req));
    if (outcome !== "unpaused" && outcome !== "unchanged") throw refusal(outcome);
    reply(res, "unpauseAgentByNumber", 204);
  });

  return router;
}
