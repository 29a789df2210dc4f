import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";
import _Ajv2020 from "ajv/dist/2020.js";
import type { ValidateFunction } from "ajv/dist/2020.js";
import _addFormats from "ajv-formats";
// js-yaml, not yaml (which the scripts use to write YAML): it parses the
// contract in much less time. The bundles parse it at build time instead
// (BUILT_CONTRACT_JSON below); a start pays for it under tsx or tsc's
// output, or once openapi.yaml has changed since the build.
import { load } from "js-yaml";
import { packageRoot } from "./package-root.js";

// Both packages are CommonJS; under NodeNext their default export is the
// module object, whose `default` is the real constructor/plugin.
const Ajv2020 = _Ajv2020.default;
const addFormats = _addFormats.default;

export type { ValidateFunction };

/** A parsed OpenAPI document, as plain JSON. */
export type OpenApiDocument = Record<string, unknown>;

/** The keys of a path item that are operations. */
export const OPERATION_METHODS: readonly string[] = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/**
 * openapi.yaml sits at the repository root, whether this module runs from
 * server/ (tests, tsx) or dist/server/ (compiled): look upwards for it rather
 * than shipping a copy that could drift.
 */
export function findContract(from: string = path.dirname(fileURLToPath(import.meta.url))): string {
  return path.join(packageRoot(from), "openapi.yaml");
}

export const CONTRACT_PATH = findContract();

/** openapi.yaml parsed at build time: the SHA-256 of its text, and the document in JSON. */
export interface BuiltContract {
  sha256: string;
  json: string;
}

// The bundles (scripts/bundle.ts) define these as the BuiltContract they
// were built with: JSON, which V8 parses many times faster than js-yaml
// parses YAML. Elsewhere (tsx, tsc's output) they are not defined at all.
declare const BUILT_CONTRACT_SHA256: string | undefined;
declare const BUILT_CONTRACT_JSON: string | undefined;

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/**
 * `text` (openapi.yaml) parsed, as the bundles carry it. Its JSON must hold
 * the same document. (A YAML alias, one object in two places, would come
 * back as two equal copies; nothing here tells them apart.)
 */
export function buildContract(text: string): BuiltContract {
  const document = load(text);
  const json = JSON.stringify(document);
  if (!isDeepStrictEqual(JSON.parse(json), document)) {
    throw new Error("openapi.yaml parses to values that JSON does not keep (a date, .nan or .inf?)");
  }
  return { sha256: sha256(text), json };
}

/**
 * openapi.yaml, parsed. A bundle carries the parse it was built with and
 * uses it while the file is still the text it was parsed from: every start
 * and admin command would otherwise parse the YAML again. A file changed
 * since is parsed as it is now.
 */
export function readContract(file: string = CONTRACT_PATH): OpenApiDocument {
  const text = readFileSync(file, "utf8");
  if (typeof BUILT_CONTRACT_SHA256 === "string" && typeof BUILT_CONTRACT_JSON === "string" && BUILT_CONTRACT_SHA256 === sha256(text)) {
    return JSON.parse(BUILT_CONTRACT_JSON) as OpenApiDocument;
  }
  return load(text) as OpenApiDocument;
}

/** openapi.yaml as parsed once at start-up: what the validator is given (validator-options.ts), the warm-up's operations, the base path and the release. */
export const CONTRACT: OpenApiDocument = readContract();

/** The path of the contract's first server (`https://localhost:9493/1.0` → `/1.0`), where the API is mounted. */
function basePathOf(document: OpenApiDocument): string {
  const url = (document.servers as { url?: string }[] | undefined)?.[0]?.url;
  if (url === undefined) throw new Error("the contract names no server");
  return new URL(url).pathname.replace(/\/+$/, "");
}

export const BASE_PATH = basePathOf(CONTRACT);

const DOCUMENT_ID = "urn:agentd:openapi";

// OpenAPI's own schema keywords, then the fields of the document root.
const OPENAPI_KEYWORDS = [
  "example",
  "discriminator",
  "xml",
  "externalDocs",
  "openapi",
  "info",
  "jsonSchemaDialect",
  "servers",
  "paths",
  "webhooks",
  "components",
  "security",
  "tags",
];

/**
 * Ajv validators for any schema of the document, addressed by JSON pointer
 * (`#/components/schemas/AgentStatus`). The whole document is added to Ajv
 * under one id, so every `$ref` inside a schema resolves exactly as it does
 * in the contract: a shared constraint is never copied to be validated.
 */
export function contractValidators(document: OpenApiDocument): (pointer: string) => ValidateFunction {
  const ajv = new Ajv2020({
    allErrors: true,
    // OpenAPI 3.1 schemas are 2020-12 plus a few OpenAPI keywords and any
    // number of `x-` extensions; declare those instead of turning strict
    // mode off, so a misspelt JSON Schema keyword still fails loudly.
    strict: true,
    allowUnionTypes: true,
    // The contract's schemas are checked by `redocly lint` (npm test, CI);
    // checking them against the JSON Schema meta-schema again here would
    // double the cost of compiling them, paid at every start.
    validateSchema: false,
  });
  addFormats(ajv);
  ajv.addVocabulary([...OPENAPI_KEYWORDS, ...extensionKeys(document)]);
  // The document is not itself a schema, only a container of them: add it
  // without validating it against the meta-schema.
  ajv.addSchema({ ...document, $id: DOCUMENT_ID }, undefined, undefined, false);

  const cache = new Map<string, ValidateFunction>();
  return (pointer) => {
    if (!pointer.startsWith("#/")) throw new Error(`not a local JSON pointer: ${pointer}`);
    let validate = cache.get(pointer);
    if (validate === undefined) {
      validate = ajv.compile({ $ref: `${DOCUMENT_ID}${pointer}` });
      cache.set(pointer, validate);
    }
    return validate;
  };
}

function extensionKeys(document: unknown): string[] {
  const keys = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node !== null && typeof node === "object") {
      for (const [key, value] of Object.entries(node)) {
        if (key.startsWith("x-")) keys.add(key);
        walk(value);
      }
    }
  };
  walk(document);
  return [...keys];
}
