// The bounds on the API's connections (server/http/connection-limits.ts),
// through a real server: a keep-alive connection left idle after an answer
// is closed, a connection in the middle of a request is not, and a cap that
// would leave the database and the relay too few descriptors refuses to
// start. How the cap follows the open-file limit is checked on its own
// (the real limit is the test runner's). Floods are in test/floods.test.ts.
import tls from "node:tls";
import { describe, expect, it } from "vitest";
import { ConnectionLimitError, RESERVED_FILES, connectionCap, openFileLimit } from "../server/http/connection-limits.js";
import { addressGroup } from "../server/http/client-address.js";
import { SUITE_AGENTS } from "./helpers/agents.js";
import { ADMIN_TOKEN, startTestServer } from "./helpers/server.js";

const AGENT = SUITE_AGENTS.pausable;
/** Well past every time-out the server is given here. */
const BOUND_MS = 15_000;
/**
 * For the keep-alive test: under Node's 5 s keep-alive default (and the
 * server's own, KEEP_ALIVE_MS), so that the test fails if the server leaves
 * an idle keep-alive connection open for longer than AGENTD_IDLE_TIMEOUT.
 */
const KEEP_ALIVE_BOUND_MS = 3_000;

/** Resolves with who closed the socket first: "server" (end or close without our doing), or "bound" when it stayed open. */
function closedWithin(socket: tls.TLSSocket, ms: number): Promise<"server" | "bound"> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve("bound"), ms);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve("server");
    });
  });
}

/** A TLS connection to the server at `url`, once its handshake is done. */
function connect(url: string, ca: string): Promise<tls.TLSSocket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: hostname, port: Number(port), ca }, () => resolve(socket));
    socket.once("error", reject);
  });
}

describe("idle connections", () => {
  it("a keep-alive connection left idle after one answer is closed by the server", async () => {
    const server = await startTestServer({ AGENTD_IDLE_TIMEOUT: "1s" }, [AGENT]);
    const { hostname, pathname } = new URL(server.url);
    try {
      const socket = await connect(server.url, server.ca);
      const closed = closedWithin(socket, KEEP_ALIVE_BOUND_MS);
      let answer = "";
      socket.on("data", (chunk: Buffer) => (answer += chunk.toString()));
      socket.write(`GET ${pathname}/agents/by-number/${AGENT.number} HTTP/1.1\r\nHost: ${hostname}\r\nX-Auth-Token: ${ADMIN_TOKEN}\r\n\r\n`);
      await expect.poll(() => answer).toMatch(/\r\n\r\n\{.*\}$/s);
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
      expect(answer).toMatch(/^connection: keep-alive\r$/im);
      expect(await closed).toBe("server");
    } finally {
      await server.close();
    }
  });

  it("a connection that sends nothing after its handshake is closed; one whose request is in progress is not", async () => {
    const server = await startTestServer({ AGENTD_IDLE_TIMEOUT: "1s" }, [AGENT]);
    const { hostname } = new URL(server.url);
    try {
      const silent = await connect(server.url, server.ca);
      expect(await closedWithin(silent, BOUND_MS)).toBe("server");

      // The headers, then nothing for longer than the idle time-out, then the body.
      const slow = await connect(server.url, server.ca);
      const closed = closedWithin(slow, BOUND_MS);
      const body = JSON.stringify({ reason: "slow client" });
      slow.write(
        `POST ${new URL(server.url).pathname}/agents/by-number/${AGENT.number}/pause HTTP/1.1\r\nHost: ${hostname}\r\n` +
          `X-Auth-Token: ${ADMIN_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
      );
      let answer = "";
      slow.on("data", (chunk: Buffer) => (answer += chunk.toString()));
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(slow.destroyed).toBe(false);
      slow.write(body);
      // The request stayed quiet for longer than the idle time-out, yet was answered.
      expect(await closed).toBe("server");
      expect(answer).toMatch(/^HTTP\/1\.1 204 /);
      expect((await server.call("GET", `/agents/by-number/${AGENT.number}`)).json).toMatchObject({ paused_reason: "slow client" });
    } finally {
      await server.close();
    }
  });
});

describe("a client that reads its answer slowly, or not at all", () => {
  /** A server of `size` agents with a 1 s idle time-out, without response validation, as in production: the validator writes a body at once. */
  function serveFleet(size: number): ReturnType<typeof startTestServer> {
    const fleet = Array.from({ length: size }, (_, i) => ({ ...AGENT, id: 10_000 + i, number: String(700_000 + i), extension: String(700_000 + i) }));
    return startTestServer({ AGENTD_IDLE_TIMEOUT: "1s", AGENTD_VALIDATE_RESPONSES: "false" }, fleet);
  }

  // Found by a soak walk: twenty clients that never read the list of a
  // 50,000-agent fleet held their connections, and hundreds of megabytes,
  // until they were killed.
  it("one that reads nothing of its answers is cut off once the idle time-out has passed", async () => {
    const server = await serveFleet(2_000);
    const { hostname, pathname } = new URL(server.url);
    try {
      const socket = await connect(server.url, server.ca);
      // Answers of some 400 KB each, far more in all than the kernel's buffers hold.
      const request = `GET ${pathname}/agents HTTP/1.1\r\nHost: ${hostname}\r\nX-Auth-Token: ${ADMIN_TOKEN}\r\n\r\n`;
      const asked = 20;
      socket.write(request.repeat(asked));
      socket.pause();
      // Well past the cut-off: the time the kernel's buffers take to fill,
      // then the idle time-out twice (Node skips its first time-out over TLS).
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      const closed = closedWithin(socket, BOUND_MS);
      let received = "";
      socket.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
      socket.on("error", () => undefined);
      socket.resume();
      expect(await closed).toBe("server");
      const answered = received.match(/HTTP\/1\.1 200 /g)?.length ?? 0;
      expect(answered, "answers the client could read before the server cut it off").toBeLessThan(asked);
    } finally {
      await server.close();
    }
  });

  // Found by a review of the first fix for the above: it cut a client that
  // read, only slowly, since the list went out as one write, which completes
  // only once all of it has reached the kernel.
  it("one that reads a large answer steadily, if not at once, gets all of it", async () => {
    const server = await serveFleet(40_000);
    const { hostname, pathname } = new URL(server.url);
    try {
      const socket = await connect(server.url, server.ca);
      socket.on("error", () => undefined);
      let received = 0;
      socket.on("data", (chunk: Buffer) => (received += chunk.length));
      socket.pause();
      // Some 8 MB, with Connection: close, so that its end is the server's.
      socket.write(`GET ${pathname}/agents HTTP/1.1\r\nHost: ${hostname}\r\nX-Auth-Token: ${ADMIN_TOKEN}\r\nConnection: close\r\n\r\n`);
      const closed = closedWithin(socket, 120_000);
      // What has arrived, every 20 ms: a few megabytes a second, seconds for
      // the whole list, where one write of it stayed unfinished for longer
      // than the idle time-out.
      const reading = setInterval(() => {
        while (socket.read() !== null);
      }, 20);
      try {
        expect(await closed).toBe("server");
      } finally {
        clearInterval(reading);
      }
      const whole = Buffer.byteLength(JSON.stringify((await server.call("GET", "/agents")).json));
      expect(received, "bytes read, headers included, against the body's length").toBeGreaterThan(whole);
    } finally {
      await server.close();
    }
  }, 120_000);
});

describe("the connection cap", () => {
  it("defaults to the open-file limit less the reserve, and refuses a cap that eats into the reserve", () => {
    expect(connectionCap(null, 1024)).toBe(1024 - RESERVED_FILES);
    expect(connectionCap(300, 1024)).toBe(300);
    expect(connectionCap(1024 - RESERVED_FILES, 1024)).toBe(1024 - RESERVED_FILES);
    expect(() => connectionCap(1024 - RESERVED_FILES + 1, 1024)).toThrow(ConnectionLimitError);
    expect(() => connectionCap(null, RESERVED_FILES)).toThrow(/open-file limit \(ulimit -Hn: Node raises the process's to the hard one\) is/);
    // No limit known (not Linux, or unlimited): only the configured cap.
    expect(connectionCap(null, null)).toBe(Infinity);
    expect(connectionCap(50, null)).toBe(50);
  });

  it("reads the soft limit from /proc/self/limits", () => {
    const text = [
      "Limit                     Soft Limit           Hard Limit           Units     ",
      "Max processes             63448                63448                processes ",
      "Max open files            4096                 524288               files     ",
    ].join("\n");
    expect(openFileLimit(() => text)).toBe(4096);
    expect(openFileLimit(() => text.replace("4096 ", "unlimited "))).toBeNull();
    expect(openFileLimit(() => {
      throw new Error("ENOENT");
    })).toBeNull();
    if (process.platform === "linux") expect(openFileLimit()).toBeGreaterThan(0);
  });

  it("a server whose AGENTD_MAX_CONNECTIONS eats into the reserve does not start, and says why", async () => {
    const limit = openFileLimit();
    if (limit === null) throw new Error("this test needs Linux's /proc/self/limits");
    await expect(startTestServer({ AGENTD_MAX_CONNECTIONS: String(limit) })).rejects.toThrow(
      /AGENTD_MAX_CONNECTIONS=\d+ would leave fewer than \d+ of the process's \d+ open files/,
    );
  });
});

describe("client addresses for rate budgets", () => {
  it("an IPv4 address is its own; IPv6 addresses group by /64; a mapped IPv4 address is the IPv4 one", () => {
    expect(addressGroup("192.0.2.1")).toBe("192.0.2.1");
    expect(addressGroup("::ffff:192.0.2.1")).toBe("192.0.2.1");
    expect(addressGroup("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(addressGroup("2001:db8:1:2:ffff:ffff:ffff:ffff")).toBe("2001:db8:1:2::/64");
    expect(addressGroup("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
    expect(addressGroup("::1")).toBe("0:0:0:0::/64");
    expect(addressGroup(undefined)).toBe("unknown");
    expect(addressGroup("not an address")).toBe("unknown");
  });
});
