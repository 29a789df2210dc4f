// A wazo-auth compatible token check for the external-verifier target:
// HEAD /0.1/token/{token}?scope={acl} → 204 granted, 403 not granted,
// 404 unknown token. Plain HTTP on loopback, as the test helper.
import http from "node:http";
import { aclGranted } from "../../server/auth/acl.js";
import { BENCH_TOKEN } from "../fixtures.js";

const TOKENS = new Map<string, string[]>([[BENCH_TOKEN, ["agentd.#"]]]);
const port = Number(process.env.BENCH_PORT);
/** Checks answered, printed on SIGTERM: shows the verifier's cache stayed warm. */
let checks = 0;

const server = http.createServer((req, res) => {
  checks++;
  const url = new URL(req.url ?? "/", "http://localhost");
  const match = /^\/0\.1\/token\/([^/]+)$/.exec(url.pathname);
  if (!match || (req.method !== "HEAD" && req.method !== "GET")) {
    res.writeHead(405).end();
    return;
  }
  const acls = TOKENS.get(decodeURIComponent(match[1]!));
  const scope = url.searchParams.get("scope");
  if (acls === undefined) res.writeHead(404).end();
  else if (scope !== null && !aclGranted(acls, scope)) res.writeHead(403).end();
  else res.writeHead(204).end();
});
server.listen(port, "127.0.0.1");
process.on("SIGTERM", () => {
  process.stdout.write(JSON.stringify({ checks }) + "\n");
  server.close(() => process.exit(0)).closeAllConnections();
});
