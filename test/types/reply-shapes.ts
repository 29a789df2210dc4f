// Compile-time checks, run by `tsc --noEmit` (test/contract.test.ts): a
// handler can only send what openapi.yaml allows. Each @ts-expect-error
// must stay an error; if a line ever compiles, tsc fails on the directive.
import type { Response } from "express";
import { reply } from "../../server/http/reply.js";

declare const res: Response;
const agent = {
  id: 1,
  origin_uuid: "6f1c3c6e-2b7a-4f5e-9a0d-3c2b1a0f9e8d",
  number: "1001",
  extension: "1001",
  context: "default",
  logged: true,
  paused: false,
  paused_reason: null,
  state_interface: "PJSIP/alice",
};

export function allowed(): void {
  reply(res, "getAgentById", 200, agent);
  reply(res, "listAgents", 200, [agent]);
  reply(res, "pauseAgentByNumber", 204);
  reply(res, "unpauseAgentByNumber", 204);
  reply(res, "unpauseAgentByNumber", 409, { error: "not logged in" });
  reply(res, "getAgentByNumber", 404, { error: "no such agent" });
}

export function refused(): void {
  // @ts-expect-error a field the contract does not have
  reply(res, "getAgentById", 200, { ...agent, password: "x" });
  // @ts-expect-error a required field missing
  reply(res, "getAgentById", 200, { id: 1 });
  // @ts-expect-error a field of the wrong type
  reply(res, "getAgentById", 200, { ...agent, id: "1" });
  // @ts-expect-error a list where one agent is documented
  reply(res, "getAgentById", 200, [agent]);
  // @ts-expect-error a status the operation does not document
  reply(res, "listAgents", 404, { error: "no such agent" });
  // @ts-expect-error a body on a 204
  reply(res, "pauseAgentByNumber", 204, {});
  // @ts-expect-error a body on unpause's 204
  reply(res, "unpauseAgentByNumber", 204, { paused: false });
  // @ts-expect-error unpause documents no 200
  reply(res, "unpauseAgentByNumber", 200, agent);
  // @ts-expect-error an error body without its identifier
  reply(res, "pauseAgentByNumber", 409, { message: "not logged in" });
}
