// `agentd import <file.json>`: a JSON array of agents, validated as a whole
// against the contract's AgentStatus schema (read from openapi.yaml at run
// time, never copied), its state rules included, before anything is
// committed. The database's CHECK constraints hold the same rules, as a
// backstop.
//
// origin_uuid belongs to the deployment, not to an agent: it is optional in
// the file and ignored when present (it must still be a UUID), so the output
// of `GET /agents` from any deployment can be imported as it is.
import type { ErrorObject, ValidateFunction } from "ajv/dist/2020.js";
import { InvalidImportError, type AgentRecord } from "./agent-store.js";
import { firstIllFormed } from "../well-formed-json.js";

interface ImportValidators {
  file: ValidateFunction;
  item: ValidateFunction;
  /** The item schema's `allOf`: the contract's state rules, to word their errors. */
  rules: unknown[];
}

/**
 * The contract with two schemas added beside AgentStatus: an agent of the
 * file (the status with origin_uuid optional), and the file (an array of
 * them). Added to the document itself, so the `$ref`s inside AgentStatus
 * (AgentId, AgentNumber, PauseReason) resolve as they do there. Compiled
 * once per contract file and process. The contract module (Ajv, js-yaml and
 * openapi.yaml) is loaded here, when the first batch is already on its way
 * to the database, not when the command starts: loading and compiling it
 * is the slowest step of the import's start (docs/performance.md).
 */
const compiled = new Map<string, ImportValidators>();
async function validatorsFor(contractFile: string | undefined): Promise<ImportValidators> {
  const { CONTRACT, CONTRACT_PATH, contractValidators, readContract } = await import("../contract.js");
  const key = contractFile ?? CONTRACT_PATH;
  const known = compiled.get(key);
  if (known) return known;
  // The shipped contract is already parsed (CONTRACT); a copy, since schemas are added to it.
  const document = key === CONTRACT_PATH ? structuredClone(CONTRACT) : readContract(key);
  const schemas = (document.components as { schemas?: Record<string, unknown> } | undefined)?.schemas;
  const status = schemas?.AgentStatus as { required?: string[]; allOf?: unknown[] } | undefined;
  if (schemas === undefined || status === undefined) throw new Error(`${key} has no components.schemas.AgentStatus`);
  schemas.AgentImportItem = { ...status, required: (status.required ?? []).filter((name) => name !== "origin_uuid") };
  schemas.AgentImportFile = { type: "array", items: { $ref: "#/components/schemas/AgentImportItem" } };
  const validator = contractValidators(document);
  const validators = {
    file: validator("#/components/schemas/AgentImportFile"),
    item: validator("#/components/schemas/AgentImportItem"),
    rules: status.allOf ?? [],
  };
  compiled.set(key, validators);
  return validators;
}

/** `/3/number` → `[3].number`; the root is `(file)`. */
function position(instancePath: string): string {
  const parts = instancePath.split("/").slice(1).map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"));
  if (parts.length === 0) return "(file)";
  return parts.map((part, i) => (/^[0-9]+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`)).join("");
}

/** One problem, its position in the file: `at` is the item's own (`/3`) when the error is an item's. */
function describe(error: ErrorObject, at: string): string {
  const params = error.params as Record<string, unknown>;
  const instancePath = at + error.instancePath;
  if (error.keyword === "required") return `${position(`${instancePath}/${String(params.missingProperty)}`)}: is required`;
  if (error.keyword === "additionalProperties") {
    return `${position(`${instancePath}/${String(params.additionalProperty)}`)}: is not an agent field`;
  }
  return `${position(instancePath)}: ${error.message ?? error.keyword}`;
}

/** `#/allOf/2/then/properties/paused/const`: an error of the item schema's state rule 2 (`#/allOf/2/if` is the rule's own). */
const RULE_ERROR = /^#\/allOf\/([0-9]+)\/(then\/|if$)/;

/**
 * An error of one of the contract's state rules (an `if`/`then` of
 * AgentStatus's allOf) in the rule's words, `[3].paused: must be false when
 * logged is false`; null for the rule's own error (Ajv's `must match "then"
 * schema`, which the field's says better) and undefined for any other error.
 */
function describeRule(error: ErrorObject, at: string, rules: unknown[]): string | null | undefined {
  const match = RULE_ERROR.exec(error.schemaPath);
  if (match === null) return undefined;
  if (match[2] === "if") return null;
  const rule = rules[Number(match[1])] as { if?: { properties?: Record<string, { const?: unknown }> } } | undefined;
  const when = Object.entries(rule?.if?.properties ?? {}).map(([field, schema]) => `${field} is ${JSON.stringify(schema.const)}`);
  const must = error.keyword === "const" ? `must be ${JSON.stringify((error.params as { allowedValue: unknown }).allowedValue)}` : (error.message ?? error.keyword);
  return `${position(at + error.instancePath)}: ${must}${when.length > 0 ? ` when ${when.join(" and ")}` : ""}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

type ImportFile = { ok: true; data: unknown } | { ok: false; problems: string[] };

/** Reads the file's JSON; nothing is validated yet. */
function readImportFile(text: string): ImportFile {
  try {
    return { ok: true, data: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, problems: [`(file): not valid JSON: ${(error as Error).message}`] };
  }
}

/** Problems are reported in this order, whatever the order they are found in. */
interface Problems {
  schema: string[];
  state: string[];
  duplicate: { id: string[]; number: string[] };
}

function allProblems({ schema, state, duplicate }: Problems): string[] {
  return [...schema, ...state, ...duplicate.id, ...duplicate.number];
}

/** The first position of each id and number seen so far, for the duplicates' problems. */
class Duplicates {
  private readonly ids = new Map<unknown, number>();
  private readonly numbers = new Map<unknown, number>();

  check(item: Record<string, unknown>, index: number, problems: Problems): void {
    Duplicates.seen(this.ids, "id", item.id, index, problems.duplicate.id);
    Duplicates.seen(this.numbers, "number", item.number, index, problems.duplicate.number);
  }

  private static seen(firstAt: Map<unknown, number>, field: string, value: unknown, index: number, problems: string[]): void {
    if (value === undefined || value === null) return;
    const first = firstAt.get(value);
    if (first === undefined) firstAt.set(value, index);
    else problems.push(`[${index}].${field}: duplicate ${field} ${JSON.stringify(value)} (first at [${first}])`);
  }
}

// Items validated between two yields to the event loop: a few milliseconds
// of work, so that a server importing a large file (agentd import over its
// admin socket) goes on answering requests meanwhile, and so that the
// database's answers to the batches already written are read meanwhile.
const SLICE = 250;
/** Agents per batch handed to the writer. */
const BATCH = 10_000;
// The first batch is larger: the database stores it while this process
// loads and compiles the validator, during which no further batch can be
// sent. It is sized to keep PostgreSQL busy for about as long, and still
// fit in the connection's socket buffers, so it does not wait for this
// process to write the rest (docs/performance.md).
const FIRST_BATCH = 30_000;

/**
 * Reads an import file and yields its agents in batches, so that a writer
 * can store one batch while the reader checks it against the contract. A batch is yielded before it is checked: the database
 * then starts as soon as the file is parsed, and works on the other core
 * while this process loads the validator and checks. The writer must hold
 * what it is given uncommitted until the generator ends (the store's import
 * is one transaction): once a problem is found nothing more is yielded, the
 * rest is still checked, and the generator throws InvalidImportError with
 * every problem, which rolls the writes back. The problems are those of
 * validating the whole array at once (Ajv reports every error), in the same
 * order: each item's schema errors (and a string that is not well-formed
 * Unicode), then those of the schema's state rules, then the duplicates.
 *
 * The agents yielded are the file's own objects, unchecked (an item that is
 * not an object comes as an empty one, so that a writer can read its
 * fields): a writer must expect any JSON value in a field, and the database
 * may refuse one before the check does.
 */
export async function* importBatches(text: string, contractFile?: string): AsyncGenerator<AgentRecord[], void, undefined> {
  const file = readImportFile(text);
  if (!file.ok) throw new InvalidImportError(file.problems);
  const data = file.data;
  if (!Array.isArray(data)) {
    const validators = await validatorsFor(contractFile);
    if (validators.file(data)) return;
    throw new InvalidImportError((validators.file.errors ?? []).map((error) => describe(error, "")));
  }
  const problems: Problems = { schema: [], state: [], duplicate: { id: [], number: [] } };
  const duplicates = new Duplicates();
  let validators: ImportValidators | undefined;
  for (let start = 0; start < data.length; ) {
    const end = Math.min(data.length, start + (start === 0 ? FIRST_BATCH : BATCH));
    const batch = (data.slice(start, end) as unknown[]).map((item) => (isObject(item) ? item : {}));
    if (allProblems(problems).length === 0) yield batch as AgentRecord[];
    // Compiled once the first batch is on its way to the database.
    validators ??= await validatorsFor(contractFile);
    for (let index = start; index < end; index++) {
      if (index > start && (index - start) % SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
      const item: unknown = data[index];
      if (!validators.item(item)) {
        for (const error of validators.item.errors ?? []) {
          const rule = describeRule(error, `/${index}`, validators.rules);
          if (rule === undefined) problems.schema.push(describe(error, `/${index}`));
          else if (rule !== null) problems.state.push(rule);
        }
      }
      // As the API refuses it: the contract's text fields are well-formed Unicode.
      const illFormed = firstIllFormed(item);
      if (illFormed !== null) problems.schema.push(`${position(`/${index}${illFormed}`)}: must be well-formed Unicode (no lone surrogate)`);
      duplicates.check(batch[index - start]!, index, problems);
    }
    start = end;
  }
  const all = allProblems(problems);
  if (all.length > 0) throw new InvalidImportError(all);
}
