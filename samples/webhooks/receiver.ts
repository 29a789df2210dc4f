// Receives agentd's webhooks (agentPaused, agentUnpaused): checks each
// delivery's Standard Webhooks signature and timestamp, refuses a bad one
// with 401, and handles each event once, whatever the retries.
import { createServer } from "node:http";
import type { components } from "agentd/client";
import { Webhook } from "standardwebhooks";

type AgentEvent = components["schemas"]["AgentPausedEvent"] | components["schemas"]["AgentUnpausedEvent"];

const webhook = new Webhook(process.env.AGENTD_WEBHOOK_SECRET!);
const handled = new Set<string>(); // webhook-ids already handled: keep them in your store

createServer((req, res) => {
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (chunk: string) => (body += chunk));
  req.on("end", () => {
    let event: AgentEvent;
    try {
      // The signature over id, timestamp and body; a timestamp over 5 minutes off is refused too.
      event = webhook.verify(body, req.headers as Record<string, string>) as AgentEvent;
    } catch {
      res.writeHead(401).end();
      return;
    }
    const id = req.headers["webhook-id"] as string;
    if (handled.has(id)) {
      console.log(`repeat ${id}`);
    } else {
      handled.add(id);
      console.log(`${event.name} ${event.data.agent_number} ${JSON.stringify(event.data.paused_reason)} ${id}`);
    }
    res.writeHead(204).end(); // any 2xx: delivered, not sent again
  });
}).listen(Number(process.env.PORT ?? 8080), () => console.log(`listening on ${process.env.PORT ?? 8080}`));
