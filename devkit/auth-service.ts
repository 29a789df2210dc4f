import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { aclGranted } from "../server/auth/acl.js";

/** How the fake auth service behaves for the next requests. */
export type AuthServiceMode = "normal" | "slow" | "garbage" | "error";

export interface AuthServiceRequest {
  method: string;
  token: string;
  scope: string | null;
}

/**
 * A small real wazo-auth compatible service on an ephemeral port:
 * `HEAD /0.1/token/{token}?scope={acl}` → 204 when the token's ACLs grant
 * the scope, 403 when they do not, 404 for an unknown token.
 * `mode` switches it to misbehave: "slow" answers after `slowMs`,
 * "garbage" answers 200 with an HTML page, "error" answers 500.
 * `stop()` closes the port so the service is down.
 */
export class AuthService {
  mode: AuthServiceMode = "normal";
  slowMs = 5000;
  readonly requests: AuthServiceRequest[] = [];
  /** TCP connections accepted so far: shows whether clients keep them alive. */
  connections = 0;
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;
  url = "";

  constructor(public tokens: Map<string, string[]> = new Map()) {
    this.server = createServer((req, res) => {
      const parsed = new URL(req.url ?? "/", "http://localhost");
      const match = /^\/0\.1\/token\/([^/]+)$/.exec(parsed.pathname);
      const token = match ? decodeURIComponent(match[1]!) : "";
      const scope = parsed.searchParams.get("scope");
      this.requests.push({ method: req.method ?? "", token, scope });
      const answer = (): void => {
        if (this.mode === "garbage") {
          res.writeHead(200, { "content-type": "text/html" }).end("<html>login</html>");
          return;
        }
        if (this.mode === "error") {
          res.writeHead(500).end();
          return;
        }
        if (!match || req.method !== "HEAD") {
          res.writeHead(405).end();
          return;
        }
        const acls = this.tokens.get(token);
        if (acls === undefined) res.writeHead(404).end();
        else if (scope !== null && !aclGranted(acls, scope)) res.writeHead(403).end();
        else res.writeHead(204).end();
      };
      if (this.mode === "slow") setTimeout(answer, this.slowMs).unref();
      else answer();
    });
    this.server.on("connection", (socket) => {
      this.connections++;
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
  }

  async start(port = 0): Promise<string> {
    this.server.listen(port, "127.0.0.1");
    await once(this.server, "listening");
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  /** Takes the service down: the port refuses connections afterwards. */
  async stop(): Promise<void> {
    if (!this.server.listening) return;
    const closed = once(this.server, "close");
    this.server.close();
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }
}
