// The physical ceiling: a bare node:https server sending the same JSON bytes
// from memory. No framework, no validation, no auth, no store, no logging:
// only TLS, HTTP parsing and a map lookup.
import { readFileSync } from "node:fs";
import https from "node:https";
import { BASE_PATH } from "../../server/contract.js";
import { buildPayloads, targetEnv } from "./payloads.js";

const { port, cert, key } = targetEnv();
const payloads = buildPayloads();
// The contract's base path, read once at start-up: the request path stays a plain string compare.
const LIST = `${BASE_PATH}/agents`;
const BY_ID = `${BASE_PATH}/agents/by-id/`;
const BY_NUMBER = `${BASE_PATH}/agents/by-number/`;
const PAUSE_SUFFIX = "/pause";

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
      if (url === LIST) return json(res, payloads.list);
      if (url.startsWith(BY_ID)) return json(res, payloads.byId.get(url.slice(BY_ID.length)));
      if (url.startsWith(BY_NUMBER)) return json(res, payloads.byNumber.get(url.slice(BY_NUMBER.length)));
    } else if (req.method === "POST") {
      const number = url.startsWith(BY_NUMBER) && url.endsWith(PAUSE_SUFFIX) ? url.slice(BY_NUMBER.length, -PAUSE_SUFFIX.length) : undefined;
      if (number !== undefined && /^[0-9]+$/.test(number)) {
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
