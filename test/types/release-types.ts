// Compile-time checks, run by `tsc --noEmit` (test/contract.test.ts): the
// types of each published release (generated/releases/, exported as
// agentd/types/<release>) are that release's contract, not today's. Each
// expected error below must stay an error; if a line ever compiles, tsc fails.
import type { components as At1514, paths as Paths1514 } from "../../generated/releases/15.14.js";
import type { components as At1518 } from "../../generated/releases/15.18.js";
import type { components as At1705, paths as Paths1705 } from "../../generated/releases/17.05.js";

const agent1514: At1514["schemas"]["AgentStatus"] = {
  id: 1,
  origin_uuid: "6f1c3c6e-2b7a-4f5e-9a0d-3c2b1a0f9e8d",
  number: "1001",
  extension: "1001",
  context: "default",
  logged: true,
};
const agent1518: At1518["schemas"]["AgentStatus"] = { ...agent1514, state_interface: "PJSIP/alice" };
const agent1705: At1705["schemas"]["AgentStatus"] = { ...agent1518, paused: true, paused_reason: "lunch break" };

// @ts-expect-error 15.14 had no state_interface
export const tooNew1514: At1514["schemas"]["AgentStatus"] = { ...agent1514, state_interface: null };
// @ts-expect-error 15.18 had no paused
export const tooNew1518: At1518["schemas"]["AgentStatus"] = { ...agent1518, paused: false };
// @ts-expect-error 17.05 requires paused and paused_reason
export const tooOld1705: At1705["schemas"]["AgentStatus"] = agent1518;

// Pause took a body only from 17.05.
export const pause1705: NonNullable<Paths1705["/agents/by-number/{agent_number}/pause"]["post"]["requestBody"]>["content"]["application/json"] = {
  reason: "lunch break",
};
export const noBody1514: Paths1514["/agents/by-number/{agent_number}/pause"]["post"]["requestBody"] = undefined;
// @ts-expect-error 15.14 had no pause body
export const body1514: Paths1514["/agents/by-number/{agent_number}/pause"]["post"]["requestBody"] = { content: { "application/json": { reason: "x" } } };

// Unpause is in every release, and its body, when sent, is the empty object.
export const unpause1514: NonNullable<Paths1514["/agents/by-number/{agent_number}/unpause"]["post"]["requestBody"]>["content"]["application/json"] = {};
// @ts-expect-error an unpause body has no reason, in any release
export const unpauseReason1705: NonNullable<Paths1705["/agents/by-number/{agent_number}/unpause"]["post"]["requestBody"]>["content"]["application/json"] = { reason: "x" };

export const agents = [agent1514, agent1518, agent1705];
