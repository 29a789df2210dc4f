// A client of an older deployment (type-checked by `npx tsc --noEmit`, not
// run). createAgentdClient follows the current contract; for a deployment of
// an older release, openapi-fetch with that release's types types what it
// really answers (15.18: no token, no `paused`). From another project, import
// the types from "agentd/types/15.18" instead of the path below.
import createClient from "openapi-fetch";
import type { paths } from "../../generated/releases/15.18.js";

const agentd = createClient<paths>({ baseUrl: "https://agentd.example:9493/1.0" });
const { data, error, response } = await agentd.GET("/agents/by-number/{agent_number}", { params: { path: { agent_number: "1001" } } });
if (data) console.log(data.number, data.logged ? `logged in on ${String(data.extension)}` : "logged out");
else console.error(response.status, error);
