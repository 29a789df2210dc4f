// The running server's admin socket (server/admin/channel.ts), through a real
// Unix socket: what it leaves in the server's log of the commands it ran.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { callAdminChannel, startAdminChannel, type AdminChannel } from "../server/admin/channel.js";
import type { AdminRequest, AdminResponse } from "../server/admin/protocol.js";
import { webhookSinkName } from "../server/events/sink.js";

let channel: AdminChannel | undefined;
let dir: string | undefined;

afterEach(async () => {
  await channel?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  channel = undefined;
  dir = undefined;
});

/** A channel whose commands answer `answer`, and the log lines it wrote. */
async function channelAnswering(answer: (request: AdminRequest) => AdminResponse): Promise<{ socket: string; lines: Record<string, unknown>[] }> {
  dir = mkdtempSync(path.join(tmpdir(), "agentd-admin-"));
  const socket = path.join(dir, "admin.sock");
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  channel = await startAdminChannel(socket, (request) => Promise.resolve(answer(request)), logger);
  return { socket, lines };
}

describe("the admin channel's log", () => {
  it("records each drop of undelivered events that deleted any: the sink without its query, the event, how many", async () => {
    const { socket, lines } = await channelAnswering((request) => ({ ok: true, dropped: request.op === "events.drop" ? 3 : 1 }));
    // As the CLI sends it: the sink's outbox name (agentd events drop --sink <URL>).
    await callAdminChannel(socket, { op: "events.drop", sink: webhookSinkName("https://hooks.example/in?key=s3cret"), force: true });
    await callAdminChannel(socket, { op: "events.drop-event", sink: "bus", event: "0b9f3c1e-6d1a-4c57-9a53-2f0e8e1d7c44" });
    const drops = lines.filter((line) => line.msg === "undelivered events dropped");
    expect(drops).toEqual([
      expect.objectContaining({ level: 40, op: "events.drop", sink: "https://hooks.example/in?…", dropped: 3 }),
      expect.objectContaining({ level: 40, op: "events.drop-event", sink: "bus", event: "0b9f3c1e-6d1a-4c57-9a53-2f0e8e1d7c44", dropped: 1 }),
    ]);
    expect(JSON.stringify(lines)).not.toContain("s3cret");
  });

  it("records no drop when nothing was deleted", async () => {
    const { socket, lines } = await channelAnswering(() => ({ ok: true, dropped: 0 }));
    await callAdminChannel(socket, { op: "events.drop-event", sink: "bus", event: "0b9f3c1e-6d1a-4c57-9a53-2f0e8e1d7c44" });
    expect(lines.map((line) => line.msg)).toEqual(["admin command"]);
  });
});
