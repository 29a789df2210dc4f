// The machine's RabbitMQ (127.0.0.1:5672, guest/guest): started when down,
// and a failure to reach it fails the suite (never a skip).
import { execFileSync } from "node:child_process";
import amqp, { type ChannelModel } from "amqplib";

export const RABBIT_URL = process.env.AGENTD_TEST_BUS_URL ?? "amqp://guest:guest@127.0.0.1:5672";

/** Resolves once the broker accepts a connection, starting it (rabbitmq-server -detached) if it does not. */
export async function ensureRabbit(): Promise<void> {
  if (await reachable()) return;
  execFileSync("rabbitmq-server", ["-detached"], { stdio: "ignore" });
  for (let i = 0; i < 120; i++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    if (await reachable()) return;
  }
  throw new Error(`RabbitMQ at ${RABBIT_URL} is down and did not start with rabbitmq-server -detached`);
}

async function reachable(): Promise<boolean> {
  try {
    const model = await amqp.connect(RABBIT_URL, { timeout: 2000 });
    await model.close();
    return true;
  } catch {
    return false;
  }
}

export interface BusMessage {
  routingKey: string;
  body: unknown;
  raw: string;
  properties: { contentType?: string; messageId?: string; timestamp?: number; deliveryMode?: number };
}

export interface BusConsumer {
  messages: BusMessage[];
  close(): Promise<void>;
}

/** A consumer on its own exclusive queue, bound to `exchange` with `pattern` (declaring the exchange as upstream does). */
export async function consume(exchange: string, pattern: string): Promise<BusConsumer> {
  const model: ChannelModel = await amqp.connect(RABBIT_URL);
  const channel = await model.createChannel();
  await channel.assertExchange(exchange, "topic", { durable: true });
  const { queue } = await channel.assertQueue("", { exclusive: true });
  await channel.bindQueue(queue, exchange, pattern);
  const messages: BusMessage[] = [];
  await channel.consume(
    queue,
    (msg) => {
      if (msg === null) return;
      const raw = msg.content.toString("utf8");
      const props = msg.properties as BusMessage["properties"];
      messages.push({
        routingKey: msg.fields.routingKey,
        body: JSON.parse(raw),
        raw,
        properties: { contentType: props.contentType, messageId: props.messageId, timestamp: props.timestamp, deliveryMode: props.deliveryMode },
      });
    },
    { noAck: true },
  );
  return { messages, close: () => model.close() };
}
