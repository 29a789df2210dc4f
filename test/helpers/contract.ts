// Validators derived from openapi.yaml, so every suite checks bodies against
// the contract itself rather than against a hand-copied schema.
//
//   const contract = loadContract();
//   expectValid(contract.responseValidator("getAgentById", 200), body);
//   expectValid(contract.schemaValidator("Error"), body);
//
// Built on Ajv's JSON Schema 2020-12 dialect (the one OpenAPI 3.1 uses) with
// ajv-formats. The whole document is added to Ajv under one id, so every
// `$ref: "#/components/..."` inside a schema resolves exactly as it does in
// the contract.
import { readFileSync } from "node:fs";
import path from "node:path";
import { load } from "js-yaml";
import { repoRoot } from "../../devkit/root.js";
import { contractValidators, type ValidateFunction } from "../../server/contract.js";

export type { ValidateFunction };

/** A parsed OpenAPI document; deliberately loose, tests walk it as plain JSON. */
export type OpenApiDocument = Record<string, any>;

export const contractPath = path.join(repoRoot, "openapi.yaml");

export const HTTP_METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"] as const;

export interface ContractOperation {
  operationId: string;
  method: (typeof HTTP_METHODS)[number];
  path: string;
  /** The operation object exactly as written (its `$ref`s unresolved). */
  operation: Record<string, any>;
}

export interface Contract {
  document: OpenApiDocument;
  /** Every operation of the document, in document order. */
  operations(): ContractOperation[];
  operation(operationId: string): ContractOperation;
  /** Follows local `$ref`s until a non-reference object is reached. */
  resolve<T = any>(node: unknown): T;
  /** Validator for `#/components/schemas/<name>`. */
  schemaValidator(name: string): ValidateFunction;
  /** Validator for the body of an operation's response; throws when that response has no such content. */
  responseValidator(operationId: string, status: number | string, mediaType?: string): ValidateFunction;
  /** Validator for an operation's request body. */
  requestBodyValidator(operationId: string, mediaType?: string): ValidateFunction;
  /** Validator for any JSON pointer into the document (`#/...`) that holds a schema. */
  validatorAt(pointer: string): ValidateFunction;
  /** The named examples of an operation's JSON response, as written (a `$ref` to components/examples stays one), in document order. */
  responseExamples(operationId: string, status: number | string): Record<string, any>;
  /** The value of an operation's first JSON response example: what Prism's mock answers unless asked for another. */
  firstExample(operationId: string, status: number | string): unknown;
}

/** Loads and parses the contract (by default the repository's openapi.yaml). */
export function loadContract(file: string = contractPath): Contract {
  return contractFrom(load(readFileSync(file, "utf8")) as OpenApiDocument);
}

/** Builds a Contract from an already parsed document (tests of the checks mutate copies). */
export function contractFrom(document: OpenApiDocument): Contract {
  const compile = contractValidators(document);
  const validatorAt = (pointer: string): ValidateFunction => {
    lookup(document, pointer); // fail with a clear message before Ajv does
    return compile(pointer);
  };

  const operations = (): ContractOperation[] => {
    const found: ContractOperation[] = [];
    for (const [route, item] of Object.entries<Record<string, any>>(document.paths ?? {})) {
      for (const method of HTTP_METHODS) {
        const operation = item?.[method];
        if (operation !== undefined) {
          found.push({ operationId: operation.operationId, method, path: route, operation });
        }
      }
    }
    return found;
  };

  const operation = (operationId: string): ContractOperation => {
    const found = operations().find((op) => op.operationId === operationId);
    if (found === undefined) throw new Error(`no operation ${operationId} in the contract`);
    return found;
  };

  // Returns the JSON pointer of the object `pointer` designates, after
  // following the `$ref`s met on the way (e.g. a response that is a
  // `$ref` to components/responses).
  const settle = (pointer: string): string => {
    let current = pointer;
    for (let hops = 0; hops < 32; hops++) {
      const node = lookup(document, current);
      if (node === null || typeof node !== "object" || typeof node.$ref !== "string") return current;
      current = node.$ref;
    }
    throw new Error(`$ref loop at ${pointer}`);
  };

  const resolve = <T>(node: unknown): T => {
    let current: any = node;
    for (let hops = 0; hops < 32; hops++) {
      if (current === null || typeof current !== "object" || typeof current.$ref !== "string") return current as T;
      current = lookup(document, current.$ref);
    }
    throw new Error("$ref loop");
  };

  const responseExamples = (operationId: string, status: number | string): Record<string, any> => {
    const response = operation(operationId).operation.responses?.[String(status)];
    if (response === undefined) throw new Error(`${operationId} has no ${String(status)} response`);
    return resolve<any>(response).content?.["application/json"]?.examples ?? {};
  };

  const mediaSchemaPointer = (owner: string, mediaType: string, what: string): string => {
    const at = settle(owner);
    const content = lookup(document, at)?.content;
    if (content === undefined || content[mediaType] === undefined) {
      throw new Error(`${what} has no ${mediaType} content`);
    }
    if (content[mediaType].schema === undefined) throw new Error(`${what} has no schema for ${mediaType}`);
    return `${at}/content/${escape(mediaType)}/schema`;
  };

  return {
    document,
    operations,
    operation,
    resolve,
    schemaValidator: (name) => validatorAt(`#/components/schemas/${escape(name)}`),
    responseValidator: (operationId, status, mediaType = "application/json") => {
      const op = operation(operationId);
      const owner = `#/paths/${escape(op.path)}/${op.method}/responses/${String(status)}`;
      if (op.operation.responses?.[String(status)] === undefined) {
        throw new Error(`${operationId} has no ${String(status)} response`);
      }
      return validatorAt(mediaSchemaPointer(owner, mediaType, `${operationId} ${String(status)}`));
    },
    requestBodyValidator: (operationId, mediaType = "application/json") => {
      const op = operation(operationId);
      if (op.operation.requestBody === undefined) throw new Error(`${operationId} has no request body`);
      const owner = `#/paths/${escape(op.path)}/${op.method}/requestBody`;
      return validatorAt(mediaSchemaPointer(owner, mediaType, `${operationId} request body`));
    },
    validatorAt,
    responseExamples,
    firstExample: (operationId, status) => {
      const [first] = Object.values(responseExamples(operationId, status));
      if (first === undefined) throw new Error(`${operationId} ${String(status)} has no example`);
      return resolve<{ value: unknown }>(first).value;
    },
  };
}

/** Throws with Ajv's explanation when `data` does not validate; returns the data otherwise. */
export function expectValid<T>(validate: ValidateFunction, data: T, label = "body"): T {
  if (!validate(data)) {
    const problems = (validate.errors ?? [])
      .map((e) => `${e.instancePath || "/"} ${e.message ?? e.keyword}`)
      .join("; ");
    throw new Error(`${label} does not match the contract: ${problems}\n${JSON.stringify(data)}`);
  }
  return data;
}

/** Resolves a local JSON pointer (`#/a/b`) in `document`; throws when it leads nowhere. */
export function lookup(document: unknown, pointer: string): any {
  if (!pointer.startsWith("#")) throw new Error(`only local references are supported: ${pointer}`);
  let node: any = document;
  for (const raw of pointer.slice(1).split("/").slice(1)) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (node === null || typeof node !== "object" || !(key in node)) {
      throw new Error(`${pointer} does not exist in the contract`);
    }
    node = node[key];
  }
  return node;
}

/** Escapes one JSON pointer segment. */
export function escape(segment: string): string {
  return segment.replace(/~/g, "~0").replace(/\//g, "~1");
}
