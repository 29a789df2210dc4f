// The `agentd/code-samples` decorator, for the current contract's docs page:
// puts the files of samples/ into each operation's `x-codeSamples`, so the
// samples are real code (type-checked, linted, run against a real server by
// test/samples.test.ts) and are never copied into openapi.yaml by hand.
//
//   samples/curl/<operationId>.sh, samples/typescript/<operationId>.ts,
//   samples/python/<operationId>.py    one of each per operation of `paths`;
//   samples/webhooks/receiver.{ts,py}  the receiver of every webhook.
//
// A sample that is missing, or whose request is not its operation's (another
// path or method), is a problem: the decorator throws, so `npm run docs`
// fails, and `npm run samples:check` (part of `npm run check`) reports it.
//
//   decorators:
//     agentd/code-samples: on
import { existsSync, readFileSync } from "node:fs";

const samplesDir = new URL("../samples/", import.meta.url);

/** Redoc shows a sample only for a language named in redocly.yaml's openapi.codeSamples.languages. */
export const LANGUAGES = [
  { lang: "curl", dir: "curl", ext: "sh" },
  { lang: "TypeScript", dir: "typescript", ext: "ts" },
  { lang: "Python", dir: "python", ext: "py" },
];

/** The two receivers, for every webhook. */
export const RECEIVERS = [
  { lang: "TypeScript", label: "Receiver (TypeScript)", file: "webhooks/receiver.ts" },
  { lang: "Python", label: "Receiver (Python)", file: "webhooks/receiver.py" },
];

const METHODS = ["get", "put", "post", "delete", "patch"];

/**
 * @typedef {{ lang: string, label: string, source: string }} CodeSample
 * @typedef {{ operationId?: string, description?: string, "x-codeSamples"?: CodeSample[] }} Operation
 * @typedef {{ paths?: Record<string, Record<string, Operation>>, webhooks?: Record<string, Record<string, Operation>>, info: { description?: string } }} Root
 */

/**
 * Where a sample sends its request, as written in it: the method and the path
 * after the base URL (`$AGENTD_URL` in curl, `os.environ['AGENTD_URL']` in
 * Python); null when it does not say.
 * @param {string} lang
 * @param {string} source
 * @returns {{ method: string, path: string } | null}
 */
export function sampleRequest(lang, source) {
  if (lang === "curl") {
    const url = /"\$AGENTD_URL(\/[^"?]*)"/.exec(source);
    const method = /(?:-X|--request)\s+([A-Z]+)/.exec(source);
    return url === null ? null : { method: (method?.[1] ?? "GET").toLowerCase(), path: /** @type {string} */ (url[1]) };
  }
  if (lang === "Python") {
    const url = /f"\{os\.environ\['AGENTD_URL'\]\}(\/[^"?]*)"/.exec(source);
    const method = /requests\.(get|put|post|delete|patch)\(/.exec(source);
    return url === null || method === null ? null : { method: /** @type {string} */ (method[1]), path: /** @type {string} */ (url[1]) };
  }
  return null;
}

/**
 * Whether `path` is an instance of the contract's path `template`.
 * @param {string} template
 * @param {string} path
 */
function matches(template, path) {
  const pattern = template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+");
  return new RegExp(`^${pattern}$`).test(path);
}

/**
 * Each operation of `paths` or `webhooks`, with its path (or webhook name) and method.
 * @param {Record<string, Record<string, Operation>> | undefined} items
 * @returns {Generator<[string, string, Operation]>}
 */
function* operationsOf(items) {
  for (const [key, item] of Object.entries(items ?? {})) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation !== undefined) yield [key, method, operation];
    }
  }
}

/** @param {string} file */
function read(file) {
  const url = new URL(file, samplesDir);
  return existsSync(url) ? readFileSync(url, "utf8") : null;
}

/**
 * Every operation's samples, and every problem with them: what the
 * decorator puts in, and what `npm run samples:check` reports.
 * @param {Root} root
 * @returns {{ samples: Map<Operation, CodeSample[]>, webhooks: Operation[], problems: string[] }}
 */
export function codeSamples(root) {
  /** @type {Map<Operation, CodeSample[]>} */
  const samples = new Map();
  /** @type {string[]} */
  const problems = [];
  /** @type {Operation[]} */
  const webhooks = [];
  for (const [template, method, operation] of operationsOf(root.paths)) {
    /** @type {CodeSample[]} */
    const list = [];
    for (const { lang, dir, ext } of LANGUAGES) {
      const file = `${dir}/${String(operation.operationId)}.${ext}`;
      const source = read(file);
      if (source === null) {
        problems.push(`samples/${file} is missing: every operation has a ${lang} sample (${method.toUpperCase()} ${template})`);
        continue;
      }
      const request = sampleRequest(lang, source);
      if (lang !== "TypeScript" && (request === null || request.method !== method || !matches(template, request.path))) {
        const sent = request === null ? "no request the check can read" : `${request.method.toUpperCase()} ${request.path}`;
        problems.push(`samples/${file} sends ${sent}, not its operation's ${method.toUpperCase()} ${template}`);
      }
      list.push({ lang, label: lang, source: source.trimEnd() });
    }
    samples.set(operation, list);
  }
  for (const [name, , operation] of operationsOf(root.webhooks)) {
    /** @type {CodeSample[]} */
    const list = [];
    for (const { lang, label, file } of RECEIVERS) {
      const source = read(file);
      if (source === null) problems.push(`samples/${file} is missing: the receiver of the webhook ${name}`);
      else list.push({ lang, label, source: source.trimEnd() });
    }
    samples.set(operation, list);
    webhooks.push(operation);
  }
  return { samples, webhooks, problems };
}

export function CodeSamples() {
  return {
    Root: {
      /** @param {Root} root */
      leave(root) {
        const { samples, webhooks, problems } = codeSamples(root);
        if (problems.length > 0) throw new Error(`agentd/code-samples:\n${problems.join("\n")}`);
        for (const [operation, list] of samples) operation["x-codeSamples"] = list;
        // Redoc 3 shows a webhook's payload, not its samples: both receivers
        // are in the page's text, and each webhook links them.
        for (const operation of webhooks) {
          operation.description = `${String(operation.description ?? "").trimEnd()}\n\nReceivers that check the signature, in TypeScript and in Python: [Receiving webhooks](#section/receiving-webhooks).\n`;
        }
        const receivers = RECEIVERS.map(({ label, file }) => `### ${label}\n\n\`samples/${file}\`\n\n\`\`\`${file.endsWith(".py") ? "python" : "ts"}\n${read(file)?.trimEnd() ?? ""}\n\`\`\``);
        root.info.description =
          `${String(root.info.description ?? "").trimEnd()}\n\n` +
          "## Code samples\n\n" +
          "Every operation has samples in curl, TypeScript and Python. They read " +
          "three environment variables: `AGENTD_URL`, the base URL with its version " +
          "prefix (`https://localhost:9493/1.0`); `AGENTD_TOKEN`, a token (see " +
          "[Authentication](#section/Authentication)); and `AGENTD_CACERT`, the server's certificate when it is " +
          "self-signed (a server started with its defaults writes it to " +
          "`data/tls/cert.pem`), unset for a certificate a public authority signed. " +
          "The curl samples run in bash, zsh or sh; the Python ones need `requests`. " +
          "The TypeScript ones import the typed client `agentd/client` from the " +
          "service's own package, which `npm pack` builds in its repository (the " +
          "npm registry's `agentd` is another project). They are ES modules (they " +
          "use top-level `await`): save one as a `.mts` file, which is a module " +
          "whatever the project's `type` (`npm init` makes it `commonjs`), and run " +
          "it with `npx tsx listAgents.mts`.\n\n" +
          "## Receiving webhooks\n\n" +
          "A receiver checks each delivery's signature and timestamp with the " +
          "`AGENTD_WEBHOOK_SECRET` the service signs with, answers a bad one with " +
          "`401`, and handles each `webhook-id` once (a retry repeats it). Any answer " +
          "but a `2xx` is retried, and holds back that agent's later events to this " +
          "receiver until it is taken; a `401`, a `5xx` or no answer holds back every " +
          "agent's (the webhooks say which answers do). " +
          "The TypeScript receiver uses the `standardwebhooks` package; the Python one, " +
          "the standard library's `hmac` only. Both listen on `PORT`, on every interface.\n\n" +
          `${receivers.join("\n\n")}\n`;
      },
    },
  };
}
