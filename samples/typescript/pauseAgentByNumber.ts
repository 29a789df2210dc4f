// Pause agent 1001 with a reason (leave the reason out to pause without one).
import { createAgentdClient } from "agentd/client";

const agentd = createAgentdClient({ baseUrl: process.env.AGENTD_URL!, token: process.env.AGENTD_TOKEN!, ca: process.env.AGENTD_CACERT });
const paused = await agentd.pauseAgentByNumber("1001", "lunch break");
if (!paused.ok) throw new Error(`${paused.status} ${paused.error.error}`); // e.g. 409 "not logged in"
console.log(paused.status);
await agentd.close();
