// Error screens by identifier (type-checked by `npx tsc --noEmit`, not run).
// From another project, import from "agentd/client" instead of "../index.js".
import { createAgentdClient, type ErrorIdOf } from "../index.js";

const agentd = createAgentdClient({ baseUrl: "https://localhost:9493/1.0", token: process.env.AGENTD_TOKEN!, ca: "data/tls/cert.pem" });

// Every identifier a pause's error answers carry, from the contract: a
// missing one, a misspelt one or one the pause never answers is a type error.
type PauseError = ErrorIdOf<"/agents/by-number/{agent_number}/pause", "post">;
const screens: Record<PauseError, string> = {
  "invalid request": "Check the reason: 1 to 80 characters.",
  "invalid token or unauthorized": "Sign in again.",
  "insufficient permissions": "You may not pause this agent.",
  "no such agent": "No agent has this number.",
  "not logged in": "The agent is not logged in.",
  "payload too large": "The reason is too long.",
  "unsupported media type": "The request was not JSON.",
  "too many requests": "Too many requests: wait a moment.",
  "server error": "The service failed; quote the request id.",
  "database unavailable": "The service is unavailable; try again.",
  "authentication server unreachable": "Sign-in is unavailable; try again.",
};

const paused = await agentd.pauseAgentByNumber("1001", "lunch break");
if (!paused.ok) {
  const id = paused.error.error;
  // Any other string: an answer outside the operation (a wrong base URL's
  // `not found`), a proxy's, or the client's label for a body that is not
  // the contract's Error.
  console.error(id in screens ? screens[id as PauseError] : `${paused.status} ${id}`);
}

// Headers (Retry-After on 429, X-Request-Id to quote) are on `raw`'s response.
const { error, response } = await agentd.raw.POST("/agents/by-number/{agent_number}/pause", {
  params: { path: { agent_number: "1001" } },
  body: { reason: "lunch break" },
});
if (error) console.error(error.error, response.headers.get("Retry-After"), response.headers.get("X-Request-Id"));
