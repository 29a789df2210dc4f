// The bound on what one connection may pipeline, driven request by request
// through the middleware itself: past MAX_WAITING requests are dropped and
// the connection stops being read; past MAX_DROPPED it is destroyed. A burst
// through a real server (server-api.test.ts) cannot tell the two apart
// reliably: whether answers go out before the flood is parsed is timing.
import { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { describe, expect, it, vi } from "vitest";
import { MAX_DROPPED, MAX_WAITING, oneRequestAtATime } from "../server/http/connection-queue.js";

function connection() {
  const socket = { pause: vi.fn(), destroy: vi.fn(), end: vi.fn(), once: vi.fn(), destroyed: false, writable: true };
  const handled: number[] = [];
  let sent = 0;
  const send = () => {
    const n = sent++;
    const req = { socket, complete: true } as unknown as IncomingMessage;
    const res = new EventEmitter() as unknown as ServerResponse;
    oneRequestAtATime(req as never, res as never, () => handled.push(n));
    return res;
  };
  return { socket: socket as typeof socket & Partial<Duplex>, handled, send };
}

describe("one connection's pipelined requests", () => {
  it("past the waiting bound: later requests are dropped and the client is no longer read, but the connection stays for the answers owed", () => {
    const { socket, handled, send } = connection();
    const first = send();
    for (let i = 0; i < MAX_WAITING; i++) send();
    expect(handled).toEqual([0]);
    expect(socket.pause).not.toHaveBeenCalled();
    for (let i = 0; i < MAX_DROPPED; i++) send();
    expect(socket.pause).toHaveBeenCalled();
    expect(socket.destroy).not.toHaveBeenCalled();
    // The waiting requests are still handled, in order, as each answer ends.
    first.emit("close");
    expect(handled).toEqual([0, 1]);
  });

  // From a review of the graceful stop: an answer that closes its connection ends the
  // socket, and a request Node reads from it after that could never be answered.
  it("a request read from a connection already ending is not handled", () => {
    const { socket, handled, send } = connection();
    socket.writable = false;
    send();
    expect(handled).toEqual([]);
  });

  it("one dropped request past the drop bound destroys the connection", () => {
    const { socket, send } = connection();
    for (let i = 0; i < 1 + MAX_WAITING + MAX_DROPPED; i++) send();
    expect(socket.destroy).not.toHaveBeenCalled();
    send();
    expect(socket.destroy).toHaveBeenCalledTimes(1);
  });
});
