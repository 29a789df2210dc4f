// The validator's route matching, patched (patches/: each route's matcher
// compiled once) and as published (the same package with the patch
// reversed, devkit/pristine-validator.ts), must answer every request the
// same: which contract route it matched, with which path parameters, or
// which error (404 unknown path, 405 wrong method with its Allow header, 400
// malformed encoding). Both run with the server's own validator options, in
// two Express apps side by side, over real HTTP with the raw paths below:
// every path of the contract, with trailing and doubled slashes, encoded
// characters, other letter cases and query strings, unknown paths, and every
// method. Each list is sent twice, so the patched side also answers from
// matchers it compiled earlier. And once more with Express's strict and
// case-sensitive routing on, which the matchers depend on.
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { createRequire } from "node:module";
import express, { type ErrorRequestHandler, type RequestHandler } from "express";
import type { OpenApiRequest } from "express-openapi-validator/dist/framework/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pristineValidator, type PristineValidator } from "../devkit/pristine-validator.js";
import { repoRoot } from "../devkit/root.js";
import { BASE_PATH, CONTRACT } from "../server/contract.js";
import { validatorOptions } from "../server/http/validator-options.js";

type ValidatorModule = typeof import("express-openapi-validator");

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/** Values for a path parameter: valid, other types, encoded characters, malformed encodings, empty. */
const PARAMETER_VALUES = ["1001", "42", "abc", "-1", "1.5", "%20", "a%2Fb", "%C3%A9", "%E2%82%AC", "%25", "%", "%E0%A4%A", "%zz", ""];

/** Every way of writing each of the contract's paths, then paths that are no route of it. */
function requestPaths(): string[] {
  const paths = new Set<string>();
  for (const template of Object.keys(CONTRACT.paths as Record<string, unknown>)) {
    for (const value of PARAMETER_VALUES) {
      const filled = BASE_PATH + template.replace(/\{[^}]+\}/g, value);
      for (const variant of [filled, `${filled}/`, `${filled}//`, filled.toUpperCase(), `${filled}?x=1`, filled.replace(BASE_PATH, "")]) {
        paths.add(variant);
      }
      paths.add(filled.replace("/agents", "//agents"));
    }
  }
  for (const unknown of ["/", BASE_PATH, `${BASE_PATH}/`, `${BASE_PATH}/nope`, "/2.0/agents", `${BASE_PATH}/agents/by-id`, `${BASE_PATH}/agents/by-number/1001/pause/again`, `${BASE_PATH}/agents/by-id/1/pause`, `${BASE_PATH}/agents%2Fby-id/1`, `${BASE_PATH}/%61gents`]) {
    paths.add(unknown);
  }
  return [...paths];
}

/** What the validator made of a request, as the app below answers it. */
interface Outcome {
  status: number;
  allow: string | null;
  body: string;
}

/** An app with `validator` set up as the server sets it up (any token passes), answering what it matched. */
function appWith(validator: ValidatorModule, routing: { strict: boolean; caseSensitive: boolean }): express.Express {
  const app = express();
  app.set("strict routing", routing.strict);
  app.set("case sensitive routing", routing.caseSensitive);
  app.use(express.json());
  app.use(validator.middleware(validatorOptions({ validateResponses: false }, { token: () => true })));
  const matched = (req: express.Request) => {
    const { openapi } = req as OpenApiRequest;
    return openapi === undefined ? null : { expressRoute: openapi.expressRoute, openApiRoute: openapi.openApiRoute, pathParams: openapi.pathParams };
  };
  const answer: RequestHandler = (req, res) => {
    res.json({ matched: matched(req), params: req.params });
  };
  const failure: ErrorRequestHandler = (err: { status?: number; message?: string; headers?: Record<string, string> }, req, res, _next) => {
    if (err.headers?.Allow !== undefined) res.setHeader("Allow", err.headers.Allow);
    res.status(err.status ?? 500).json({ error: err.message, matched: matched(req) });
  };
  app.use(answer);
  app.use(failure);
  return app;
}

async function listen(app: express.Express): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())).then(() => undefined),
  };
}

function send(agent: http.Agent, port: number, method: string, rawPath: string): Promise<Outcome> {
  const body = ["POST", "PUT", "PATCH"].includes(method) ? "{}" : undefined;
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port, method, path: rawPath, agent, headers: { "x-auth-token": "any", ...(body === undefined ? {} : { "content-type": "application/json" }) } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => {
          const allow = res.headers.allow;
          resolve({ status: res.statusCode ?? 0, allow: typeof allow === "string" ? allow : null, body: text });
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("express-openapi-validator route matching: patched and as published answer alike", () => {
  let pristine: PristineValidator;
  let patchedModule: ValidatorModule;
  let publishedModule: ValidatorModule;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

  beforeAll(async () => {
    pristine = await pristineValidator();
    const require = createRequire(path.join(repoRoot, "package.json"));
    patchedModule = require("express-openapi-validator") as ValidatorModule;
    publishedModule = require(path.join(pristine.dir, "dist", "index.js")) as ValidatorModule;
  });
  afterAll(async () => {
    agent.destroy();
    await pristine?.remove();
  });

  it("compares two different route matchers: the installed one caches, the reversed copy compiles per request", () => {
    const file = "dist/middlewares/openapi.metadata.js";
    expect(pristine.patchedFiles).toEqual([file]);
    const installed = readFileSync(path.join(repoRoot, "node_modules", "express-openapi-validator", file), "utf8");
    const published = readFileSync(path.join(pristine.dir, file), "utf8");
    expect(installed).toContain("routeMatcher(expressRoute, pathOpts)");
    expect(published).not.toContain("routeMatcher(");
    expect(published).toContain("(0, path_to_regexp_1.pathToRegexp)(expressRoute, pathOpts)");
  });

  for (const routing of [
    { strict: false, caseSensitive: false },
    { strict: true, caseSensitive: true },
  ]) {
    it(`answers every request the same (strict routing ${routing.strict ? "on" : "off"}, case-sensitive ${routing.caseSensitive ? "on" : "off"})`, async () => {
      const patched = await listen(appWith(patchedModule, routing));
      const published = await listen(appWith(publishedModule, routing));
      try {
        const requests = requestPaths().flatMap((rawPath) => METHODS.map((method) => ({ method, rawPath })));
        const statuses = new Map<number, number>();
        for (const round of [1, 2]) {
          for (const { method, rawPath } of requests) {
            const [mine, theirs] = [await send(agent, patched.port, method, rawPath), await send(agent, published.port, method, rawPath)];
            expect({ round, method, rawPath, ...mine }).toEqual({ round, method, rawPath, ...theirs });
            statuses.set(mine.status, (statuses.get(mine.status) ?? 0) + 1);
          }
        }
        // Not a comparison of two empty answers: the lists reach every outcome of route matching.
        for (const status of [200, 400, 404, 405]) expect(statuses.get(status) ?? 0, `answers ${status}`).toBeGreaterThan(0);
      } finally {
        await patched.close();
        await published.close();
      }
    });
  }
});
