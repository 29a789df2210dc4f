// The stateful mock's request gate (mock/request-gate.ts), in a real Express
// app over HTTP: a reset runs once the requests under way have been
// answered, and the requests that come meanwhile wait for it.
import http from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { createRequestGate, type RequestGate } from "../mock/request-gate.js";

/** A handler that waits: `reached` once a request is in it, answered after `release()`. */
function hold(): { reached: Promise<void>; release: () => void; wait: () => Promise<void> } {
  let release!: () => void;
  let arrive!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const reached = new Promise<void>((resolve) => (arrive = resolve));
  return {
    reached,
    release,
    wait: () => {
      arrive();
      return released;
    },
  };
}

describe("the request gate", () => {
  let server: http.Server | undefined;
  afterEach(() => {
    server?.closeAllConnections();
    server?.close();
  });

  async function start(gate: RequestGate, log: string[], slow: ReturnType<typeof hold>): Promise<string> {
    const app = express();
    app.use(gate.middleware);
    app.get("/slow", async (_req, res) => {
      log.push("slow handled");
      await slow.wait();
      res.end();
      log.push("slow answered");
    });
    app.get("/fast", (_req, res) => {
      log.push("fast handled");
      res.end();
    });
    server = http.createServer(app);
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it("runs the work once the request under way is answered, and holds a new request until the work ends", async () => {
    const gate = createRequestGate();
    const log: string[] = [];
    const slow = hold();
    const url = await start(gate, log, slow);

    const slowAnswer = fetch(`${url}/slow`);
    await slow.reached;
    let finishWork!: () => void;
    const work = gate.alone(async () => {
      log.push("work started");
      await new Promise<void>((resolve) => (finishWork = resolve));
      log.push("work ended");
    });
    slow.release();
    await slowAnswer;
    await expect.poll(() => log).toContain("work started");
    const fastAnswer = fetch(`${url}/fast`);
    // Held: given time to be handled, it is not, until the work ends.
    await new Promise((resolve) => setTimeout(resolve, 200));
    finishWork();
    await work;
    expect((await fastAnswer).status).toBe(200);
    expect(log).toEqual(["slow handled", "slow answered", "work started", "work ended", "fast handled"]);
  });

  it("forgets a held request whose client left: the next work does not wait for it", async () => {
    const gate = createRequestGate();
    const log: string[] = [];
    const url = await start(gate, log, hold());
    let finishWork!: () => void;
    const work = gate.alone(async () => {
      await new Promise<void>((resolve) => (finishWork = resolve));
    });
    const leaving = new AbortController();
    const left = fetch(`${url}/fast`, { signal: leaving.signal }).catch((err: unknown) => err);
    // Held by the gate, then given up by its client.
    await new Promise((resolve) => setTimeout(resolve, 200));
    leaving.abort();
    expect(await left).toBeInstanceOf(Error);
    await new Promise((resolve) => setTimeout(resolve, 200));
    finishWork();
    await work;
    // Let in once the gate opened, it would be handled by now.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(log).toEqual([]);
    // Counted in after it left, it would hold this one for ever.
    await gate.alone(() => Promise.resolve());
    expect((await fetch(`${url}/fast`)).status).toBe(200);
  });

  it("runs two pieces of work one after the other, and opens again when one throws", async () => {
    const gate = createRequestGate();
    const log: string[] = [];
    const url = await start(gate, log, hold());
    let finishFirst!: () => void;
    const first = gate.alone(async () => {
      log.push("first started");
      await new Promise<void>((resolve) => (finishFirst = resolve));
      log.push("first ended");
      throw new Error("first failed");
    });
    const second = gate.alone(() => {
      log.push("second");
      return Promise.resolve();
    });
    await expect.poll(() => log).toContain("first started");
    finishFirst();
    await expect(first).rejects.toThrow("first failed");
    await second;
    expect((await fetch(`${url}/fast`)).status).toBe(200);
    expect(log).toEqual(["first started", "first ended", "second", "fast handled"]);
  });
});
