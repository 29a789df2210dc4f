// A small TCP proxy on 127.0.0.1 for fault tests: put it between the server
// and PostgreSQL, then cut the link in one of three ways and restore it.
//
//   const proxy = await startTcpProxy({ port: 5432 });
//   // AGENTD_DATABASE_URL=postgres://postgres@127.0.0.1:${proxy.port}/db
//   await proxy.cut("refuse");    // or "blackhole" or "stall"
//   await proxy.restore();
//   await proxy.close();
//
// Or hang only the connections open now, while new ones still go through
// (a peer that lost one connection's state): stallOpen(), then restore()
// to destroy the hung ones.
//
// Modes of cut():
// - "refuse":    every connection is destroyed and the port stops listening,
//                so new connections get ECONNREFUSED (PostgreSQL down).
// - "blackhole": every connection is destroyed; new ones are accepted but
//                never forwarded nor answered (a firewall dropping packets
//                after the handshake, a hung server).
// - "stall":     existing connections stay open but nothing flows any more
//                either way; new ones are blackholed (a network partition).
import net from "node:net";

export type CutMode = "refuse" | "blackhole" | "stall";

export interface TcpProxy {
  /** The port the proxy listens on (the same after restore()). */
  readonly port: number;
  /** Connections the proxy accepted so far. */
  readonly accepted: number;
  cut(mode: CutMode): Promise<void>;
  /** Stalls the connections open now, as cut("stall") does, but keeps forwarding new ones. */
  stallOpen(): void;
  /** Forwards again: new connections reach the target. Stalled connections are destroyed. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

interface Pair {
  client: net.Socket;
  upstream: net.Socket | null;
}

export async function startTcpProxy(target: { host?: string; port: number }): Promise<TcpProxy> {
  const host = target.host ?? "127.0.0.1";
  let mode: CutMode | "open" = "open";
  let accepted = 0;
  const pairs = new Set<Pair>();
  // Sockets held open without forwarding (blackhole / stall).
  const held = new Set<net.Socket>();

  const destroy = (pair: Pair): void => {
    pair.client.destroy();
    pair.upstream?.destroy();
    pairs.delete(pair);
  };

  // Half-open allowed: a held socket must not answer a FIN with its own, as
  // nothing crosses a real partition; while forwarding, pipe() carries FINs.
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    accepted++;
    client.on("error", () => {});
    if (mode !== "open") {
      // Accepted by the kernel, then silence: reads are dropped, nothing is written.
      held.add(client);
      client.on("close", () => held.delete(client));
      client.resume();
      return;
    }
    const pair: Pair = { client, upstream: null };
    pairs.add(pair);
    const upstream = net.connect({ host, port: target.port, allowHalfOpen: true });
    pair.upstream = upstream;
    upstream.on("error", () => destroy(pair));
    client.on("close", () => destroy(pair));
    upstream.on("close", () => destroy(pair));
    client.pipe(upstream);
    upstream.pipe(client);
  });

  const listen = (port: number): Promise<void> =>
    new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen({ port, host: "127.0.0.1" }, () => {
        server.off("error", reject);
        resolve();
      });
    });
  const stopListening = (): Promise<void> =>
    new Promise((resolve) => {
      if (!server.listening) resolve();
      else server.close(() => resolve());
    });

  await listen(0);
  const port = (server.address() as net.AddressInfo).port;

  const stall = (pair: Pair): void => {
    // Stop the flow both ways; whatever arrives is read and dropped.
    pair.client.unpipe();
    pair.upstream?.unpipe();
    for (const socket of [pair.client, pair.upstream]) {
      if (socket === null) continue;
      socket.removeAllListeners("data");
      socket.on("data", () => {});
      held.add(socket);
    }
    pairs.delete(pair);
  };

  return {
    port,
    get accepted() {
      return accepted;
    },
    async cut(next) {
      mode = next;
      for (const pair of [...pairs]) {
        if (next === "stall") stall(pair);
        else destroy(pair);
      }
      if (next === "refuse") {
        // server.close() waits for held sockets; do not wait for it here.
        for (const socket of held) socket.destroy();
        await stopListening();
      }
    },
    stallOpen() {
      for (const pair of [...pairs]) stall(pair);
    },
    async restore() {
      mode = "open";
      for (const socket of held) socket.destroy();
      held.clear();
      if (!server.listening) await listen(port);
    },
    async close() {
      mode = "refuse";
      for (const pair of [...pairs]) destroy(pair);
      for (const socket of held) socket.destroy();
      held.clear();
      await stopListening();
    },
  };
}
