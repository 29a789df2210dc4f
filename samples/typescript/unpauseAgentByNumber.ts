// End the pause of agent 1001.
import { createAgentdClient } from "agentd/client";

const agentd = createAgentdClient({ baseUrl: process.env.AGENTD_URL!, token: process.env.AGENTD_TOKEN!, ca: process.env.AGENTD_CACERT });
const unpaused = await agentd.unpauseAgentByNumber("1001");
if (!unpaused.ok) throw new Error(`${unpaused.status} ${unpaused.error.error}`);
console.log(unpaused.status);
await agentd.close();
