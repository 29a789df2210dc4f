// The operator listener: plain HTTP, apart from the API, for load balancers
// and Prometheus. It is not part of the API contract (openapi.yaml), which
// describes what clients see.
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import type { Readiness } from "./readiness.js";
import { hostPort } from "../host-port.js";

export interface OpsListener {
  url: string;
  close(): Promise<void>;
}

export interface OpsDependencies {
  readiness: Readiness;
  registry: Registry;
}

export async function startOpsListener(host: string, port: number, deps: OpsDependencies): Promise<OpsListener> {
  const server = http.createServer((req, res) => {
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" }).end(JSON.stringify(body));
    };
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    const path = (req.url ?? "/").split("?")[0];
    if (path === "/healthz") {
      json(200, { status: "ok" });
    } else if (path === "/readyz") {
      void deps.readiness.report().then((report) => json(report.ready ? 200 : 503, report.body));
    } else if (path === "/metrics") {
      deps.registry.metrics().then(
        (text) => res.writeHead(200, { "content-type": deps.registry.contentType }).end(text),
        () => json(500, { error: "metrics unavailable" }),
      );
    } else {
      json(404, { error: "not found", endpoints: ["/healthz", "/readyz", "/metrics"] });
    }
  });
  // Probes are short: a client that holds a connection open gets nothing for it.
  server.headersTimeout = 5_000;
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://${hostPort(host, bound)}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Whether an address only this machine can reach. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || /^127\./.test(host) || host === "::1" || host === "[::1]";
}
