// A real HTTP receiver of webhooks: records every request, and answers with
// the status its `answer` function chooses (200 by default).
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedWebhook {
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The status it was answered with. */
  status: number;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** What the next requests are answered; receives the request's position (0-based). */
  answer: (index: number, body: string) => number;
  close(): Promise<void>;
}

export async function startWebhookReceiver(port = 0): Promise<WebhookReceiver> {
  const receiver: WebhookReceiver = {
    url: "",
    received: [],
    answer: () => 200,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const status = receiver.answer(receiver.received.length, body);
      receiver.received.push({ headers: req.headers, body, status });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  server.closeIdleConnections();
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}

/** Waits (bounded, generously) until `condition` holds; fails naming `what`. */
export async function waitUntil(condition: () => boolean | Promise<boolean>, what: string, boundMs = 30_000): Promise<void> {
  const end = Date.now() + boundMs;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
