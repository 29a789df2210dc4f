// What express-openapi-validator is given of the contract
// (validatorContract in server/http/validator-options.ts): less to walk at
// start, and nothing that a request is checked against left out. The
// requests themselves are checked through the real app by server-api,
// contract-suite, fuzz and route-matching.
import { describe, expect, it } from "vitest";
import { CONTRACT, OPERATION_METHODS, readContract, type OpenApiDocument } from "../server/contract.js";
import { validatorContract } from "../server/http/validator-options.js";
import { lookup } from "./helpers/contract.js";

type Json = Record<string, unknown>;

/** Every `$ref` value in `node`. */
function refs(node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) for (const item of node) refs(item, found);
  else if (node !== null && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string") found.push(value);
      else refs(value, found);
    }
  }
  return found;
}

const paths = (document: OpenApiDocument) => document.paths as Record<string, Json>;
const components = (document: OpenApiDocument) => document.components as Json;

describe("the contract as the validator is given it", () => {
  it("has no webhooks, and without response validation no responses, and keeps all the rest", () => {
    const given = validatorContract(CONTRACT, false);
    const { webhooks, paths: _paths, components: _components, ...top } = CONTRACT;
    expect(webhooks).toBeDefined();
    expect(given.webhooks).toBeUndefined();
    expect(given).toMatchObject(top);

    const { responses, headers, ...kept } = components(CONTRACT);
    expect(responses).toBeDefined();
    expect(headers).toBeDefined();
    expect(components(given)).toEqual(kept);

    expect(Object.keys(paths(given))).toEqual(Object.keys(paths(CONTRACT)));
    let operations = 0;
    for (const [route, item] of Object.entries(paths(CONTRACT))) {
      for (const [key, value] of Object.entries(item)) {
        const givenValue = paths(given)[route]![key];
        if (!OPERATION_METHODS.includes(key)) {
          expect(givenValue).toBe(value);
          continue;
        }
        operations++;
        const { responses: operationResponses, ...operation } = value as Json;
        expect(operationResponses).toBeDefined();
        expect(givenValue).toEqual(operation);
        // What auth.ts reads from the matched operation.
        expect(givenValue).toHaveProperty("x-required-acl");
      }
    }
    expect(operations).toBeGreaterThanOrEqual(5);
  });

  it("every $ref in what it is given points into it, with or without response validation", () => {
    for (const given of [validatorContract(CONTRACT, false), validatorContract(CONTRACT, true)]) {
      const found = refs(given);
      expect(found.length).toBeGreaterThan(0);
      for (const ref of found) expect(() => lookup(given, ref), ref).not.toThrow();
    }
    // The check can fail: without its components, the full contract's references dangle.
    const withoutComponents = { ...CONTRACT, components: {} };
    expect(() => refs(withoutComponents).forEach((ref) => lookup(withoutComponents, ref))).toThrow(/does not exist/);
  });

  it("with response validation keeps the responses: only the webhooks go", () => {
    const { webhooks: _webhooks, ...rest } = CONTRACT;
    expect(validatorContract(CONTRACT, true)).toEqual(rest);
  });

  it("leaves the contract itself as parsed", () => {
    validatorContract(CONTRACT, false);
    validatorContract(CONTRACT, true);
    expect(CONTRACT).toEqual(readContract());
  });
});
