// The client in five lines (type-checked by `npx tsc --noEmit`, not run).
// From another project, import from "agentd/client" instead of "../index.js".
import { createAgentdClient } from "../index.js";

const agentd = createAgentdClient({ baseUrl: "https://localhost:9493/1.0", token: process.env.AGENTD_TOKEN!, ca: "data/tls/cert.pem" });
const agents = await agentd.listAgents();
if (agents.ok) console.table(agents.data);
else console.error(`${agents.status} ${agents.error.error}`);
