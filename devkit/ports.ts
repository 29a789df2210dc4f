import { createServer } from "node:net";

/** The ports this process has been handed: the kernel may hand a port it has just released out again. */
const handedOut = new Set<number>();

/**
 * Asks the kernel for a free TCP port on `host` by binding port 0, then
 * releases it; never the same port twice in one process, so two children
 * given ports one after the other never share one. Another process can take
 * the port before the caller binds it, so callers that start a child on the
 * port should retry on EADDRINUSE (startPrism does).
 */
export async function freePort(host = "127.0.0.1"): Promise<number> {
  for (;;) {
    const port = await bindAndRelease(host);
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}

function bindAndRelease(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen({ port: 0, host, exclusive: true }, () => {
      const address = server.address();
      if (address === null || typeof address === "string") {
        server.close();
        reject(new Error("could not read the bound port"));
        return;
      }
      const { port } = address;
      server.close((err) => (err ? reject(err) : resolve(port)));
    });
  });
}
