// A real HTTP receiver of webhooks: records every request, and answers with
// the status its `answer` function chooses (200 by default).
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedWebhook {
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The status it was answered with. */
  status: number;
  /** The sender's port: requests on one kept connection share it. */
  remotePort: number | undefined;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** What the next requests are answered; receives the request's position (0-based). */
  answer: (index: number, body: string) => number;
  /** The body of every answer ("" by default): a receiver that refuses says why there. */
  answerBody: string;
  /** When not 0, the body goes in two halves this many ms apart, as over a slow link. */
  answerGapMs: number;
  /** How long each answer waits, so that deliveries overlap (0 by default). */
  delayMs: number;
  /** The requests waiting for their answer now. */
  inFlight: number;
  /** The most requests that were waiting for their answer at one time. */
  maxInFlight: number;
  /** The most requests about one agent (the body's data.agent_number) that were waiting at one time. */
  maxInFlightPerAgent: number;
  close(): Promise<void>;
}

export async function startWebhookReceiver(port = 0): Promise<WebhookReceiver> {
  const receiver: WebhookReceiver = {
    url: "",
    received: [],
    answer: () => 200,
    answerBody: "",
    answerGapMs: 0,
    delayMs: 0,
    inFlight: 0,
    maxInFlight: 0,
    maxInFlightPerAgent: 0,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  const perAgent = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const agent = agentOf(body);
      receiver.inFlight++;
      perAgent.set(agent, (perAgent.get(agent) ?? 0) + 1);
      receiver.maxInFlight = Math.max(receiver.maxInFlight, receiver.inFlight);
      receiver.maxInFlightPerAgent = Math.max(receiver.maxInFlightPerAgent, perAgent.get(agent)!);
      setTimeout(() => {
        receiver.inFlight--;
        perAgent.set(agent, perAgent.get(agent)! - 1);
        const status = receiver.answer(receiver.received.length, body);
        receiver.received.push({ headers: req.headers, body, status, remotePort: req.socket.remotePort });
        const answer = receiver.answerBody;
        if (receiver.answerGapMs === 0) {
          res.writeHead(status).end(answer);
        } else {
          res.writeHead(status, { "content-length": Buffer.byteLength(answer) }).write(answer.slice(0, answer.length / 2));
          setTimeout(() => res.end(answer.slice(answer.length / 2)), receiver.answerGapMs).unref();
        }
      }, receiver.delayMs).unref();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  server.closeIdleConnections();
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}

function agentOf(body: string): string {
  try {
    return String((JSON.parse(body) as { data?: { agent_number?: unknown } }).data?.agent_number);
  } catch {
    return "";
  }
}
