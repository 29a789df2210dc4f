// The framework ceiling: what the chosen stack costs by itself. Express 5 and
// express-openapi-validator on openapi.yaml with the shipped app's own
// validator options (server/http/validator-options.ts; responses not
// validated, as in production), the JSON body parser, ETag and X-Powered-By
// off, the security scheme answered by a trivial handler, and
// the same JSON bytes from memory. No auth, no store, no logging, no rate limit.
//
// The validator is the one installed (patched by patches/, as the server
// ships it), or, with BENCH_VALIDATOR set to a copy of the package, that
// copy: the runner passes the package as published, so both ceilings are
// measured side by side.
import { readFileSync } from "node:fs";
import https from "node:https";
import { createRequire } from "node:module";
import path from "node:path";
import express, { type NextFunction, type Request, type Response } from "express";
import { BASE_PATH } from "../../server/contract.js";
import { validatorOptions } from "../../server/http/validator-options.js";
import { buildPayloads, targetEnv } from "./payloads.js";

const validatorDir = process.env.BENCH_VALIDATOR;
const OpenApiValidator = createRequire(import.meta.url)(
  validatorDir === undefined ? "express-openapi-validator" : path.join(validatorDir, "dist", "index.js"),
) as typeof import("express-openapi-validator");
const { port, cert, key } = targetEnv();
const payloads = buildPayloads();

function send(res: Response, body: Buffer | undefined): void {
  if (body === undefined) {
    res.status(404).json({ error: "no such agent" });
    return;
  }
  res.status(200).type("application/json").send(body);
}

const app = express();
app.disable("x-powered-by");
app.set("etag", false);
app.use(express.json({ limit: 16 * 1024, strict: true }));
// The shipped validator settings; only the security scheme is answered by a trivial handler.
app.use(OpenApiValidator.middleware(validatorOptions({ validateResponses: false }, { token: () => Promise.resolve(true) })));
const api = express.Router();
api.get("/agents", (_req, res) => send(res, payloads.list));
api.get("/agents/by-id/:agent_id", (req, res) => send(res, payloads.byId.get(String(req.params.agent_id))));
api.get("/agents/by-number/:agent_number", (req, res) => send(res, payloads.byNumber.get(String(req.params.agent_number))));
api.post("/agents/by-number/:agent_number/pause", (req, res) => {
  if (payloads.pausable.has(String(req.params.agent_number))) res.status(204).end();
  else send(res, undefined);
});
app.use(BASE_PATH, api);
app.use((err: { status?: number; message?: string }, _req: Request, res: Response, _next: NextFunction) => {
  res.status(err.status ?? 500).json({ error: err.message ?? "error" });
});

const server = https.createServer({ cert: readFileSync(cert), key: readFileSync(key), minVersion: "TLSv1.2" }, app);
server.keepAliveTimeout = 5_000;
server.listen(port, "127.0.0.1");
process.on("SIGTERM", () => server.close(() => process.exit(0)).closeAllConnections());
