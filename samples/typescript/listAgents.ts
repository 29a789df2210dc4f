// List every agent.
import { createAgentdClient } from "agentd/client";

const agentd = createAgentdClient({ baseUrl: process.env.AGENTD_URL!, token: process.env.AGENTD_TOKEN!, ca: process.env.AGENTD_CACERT });
const agents = await agentd.listAgents();
if (!agents.ok) throw new Error(`${agents.status} ${agents.error.error}`);
for (const agent of agents.data) console.log(agent.number, agent.logged ? (agent.paused ? "paused" : "available") : "logged out");
await agentd.close();
