// The physical ceiling: a bare node:https server sending the same JSON bytes
// from memory. No framework, no validation, no auth, no store, no logging:
// only TLS, HTTP parsing and a map lookup.
import { readFileSync } from "node:fs";
import https from "node:https";
import { buildPayloads, targetEnv } from "./payloads.js";

const { port, cert, key } = targetEnv();
const payloads = buildPayloads();
const BY_ID = "/1.0/agents/by-id/";
const BY_NUMBER = "/1.0/agents/by-number/";
const PAUSE = /^\/1\.0\/agents\/by-number\/([0-9]+)\/pause$/;

function json(res: import("node:http").ServerResponse, body: Buffer | undefined): void {
  if (body === undefined) {
    res.writeHead(404, { "content-type": "application/json; charset=utf-8" }).end('{"error":"no such agent"}');
    return;
  }
  res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": body.length }).end(body);
}

const server = https.createServer(
  { cert: readFileSync(cert), key: readFileSync(key), minVersion: "TLSv1.2" },
  (req, res) => {
    const url = req.url ?? "/";
    if (req.method === "GET") {
      if (url === "/1.0/agents") return json(res, payloads.list);
      if (url.startsWith(BY_ID)) return json(res, payloads.byId.get(url.slice(BY_ID.length)));
      if (url.startsWith(BY_NUMBER)) return json(res, payloads.byNumber.get(url.slice(BY_NUMBER.length)));
    } else if (req.method === "POST") {
      const number = PAUSE.exec(url)?.[1];
      if (number !== undefined) {
        // Read the body as a real handler would, then answer.
        const chunks: Buffer[] = [];
        req.on("data", (chunk: Buffer) => chunks.push(chunk));
        req.on("end", () => {
          JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
          if (payloads.pausable.has(number)) res.writeHead(204).end();
          else json(res, undefined);
        });
        return;
      }
    }
    json(res, undefined);
  },
);
server.keepAliveTimeout = 5_000;
server.listen(port, "127.0.0.1");
process.on("SIGTERM", () => server.close(() => process.exit(0)).closeAllConnections());
