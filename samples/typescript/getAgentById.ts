// Get agent 1 by its identifier.
import { createAgentdClient } from "agentd/client";

const agentd = createAgentdClient({ baseUrl: process.env.AGENTD_URL!, token: process.env.AGENTD_TOKEN!, ca: process.env.AGENTD_CACERT });
const agent = await agentd.getAgentById(1);
if (!agent.ok) throw new Error(`${agent.status} ${agent.error.error}`);
console.log(JSON.stringify(agent.data));
await agentd.close();
