// `agentd import <file.json>`: a JSON array of agents, validated as a whole
// against the contract's AgentStatus schema (read from openapi.yaml at run
// time, never copied) before anything is written.
//
// origin_uuid belongs to the deployment, not to an agent: it is optional in
// the file and ignored when present (it must still be a UUID), so the output
// of `GET /agents` from any deployment can be imported as it is.
import type { ErrorObject, ValidateFunction } from "ajv/dist/2020.js";
import { CONTRACT, CONTRACT_PATH, contractValidators, readContract } from "../contract.js";
import type { AgentRecord } from "../store/agent-store.js";

export type AgentImport = { ok: true; agents: AgentRecord[] } | { ok: false; problems: string[] };

/**
 * The contract with two schemas added beside AgentStatus: an agent of the
 * file (the status with origin_uuid optional), and the file (an array of
 * them). Added to the document itself, so the `$ref`s inside AgentStatus
 * (AgentId, AgentNumber, PauseReason) resolve as they do there. Compiled
 * once per contract file and process.
 */
const compiled = new Map<string, { file: ValidateFunction; item: ValidateFunction }>();
function validatorsFor(contractFile: string): { file: ValidateFunction; item: ValidateFunction } {
  const known = compiled.get(contractFile);
  if (known) return known;
  // The shipped contract is already parsed (CONTRACT); a copy, since schemas are added to it.
  const document = contractFile === CONTRACT_PATH ? structuredClone(CONTRACT) : readContract(contractFile);
  const schemas = (document.components as { schemas?: Record<string, unknown> } | undefined)?.schemas;
  const status = schemas?.AgentStatus as { required?: string[] } | undefined;
  if (schemas === undefined || status === undefined) throw new Error(`${contractFile} has no components.schemas.AgentStatus`);
  schemas.AgentImportItem = { ...status, required: (status.required ?? []).filter((name) => name !== "origin_uuid") };
  schemas.AgentImportFile = { type: "array", items: { $ref: "#/components/schemas/AgentImportItem" } };
  const validator = contractValidators(document);
  const validators = { file: validator("#/components/schemas/AgentImportFile"), item: validator("#/components/schemas/AgentImportItem") };
  compiled.set(contractFile, validators);
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

// The contract's state rules that a schema cannot express, in its own words.
function stateProblems(agent: Record<string, unknown>, at: string): string[] {
  const problems: string[] = [];
  if (agent.logged === false) {
    if (agent.paused === true) problems.push(`${at}.paused: must be false when logged is false`);
    for (const field of ["extension", "context", "state_interface"] as const) {
      if (agent[field] !== null && agent[field] !== undefined) problems.push(`${at}.${field}: must be null when logged is false`);
    }
  }
  if (agent.paused === false && agent.paused_reason !== null && agent.paused_reason !== undefined) {
    problems.push(`${at}.paused_reason: must be null when paused is false`);
  }
  return problems;
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
  private readonly firstAt = { id: new Map<unknown, number>(), number: new Map<unknown, number>() };

  check(item: Record<string, unknown>, index: number, problems: Problems): void {
    for (const field of ["id", "number"] as const) {
      const value = item[field];
      if (value === undefined || value === null) continue;
      const first = this.firstAt[field].get(value);
      if (first === undefined) this.firstAt[field].set(value, index);
      else problems.duplicate[field].push(`[${index}].${field}: duplicate ${field} ${JSON.stringify(value)} (first at [${first}])`);
    }
  }
}

/** An import file that is not valid: every problem, with its position in the file. */
export class InvalidImportError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid import file: ${problems.length} problem(s)`);
  }
}

// Items validated between two yields to the event loop: a few milliseconds
// of work, so that a server importing a large file (agentd import over its
// admin socket) goes on answering requests meanwhile, and so that the
// database's answers to the batches already written are read meanwhile.
const SLICE = 250;
/** Agents per batch handed to the writer. */
const BATCH = 10_000;

/**
 * Reads an import file and yields its agents in batches, each validated
 * against the contract and its state rules before it is yielded, so that a
 * writer can store one batch while the next is checked. Once a problem is
 * found nothing more is yielded, the rest is still checked, and the
 * generator throws InvalidImportError with every problem: the writer must
 * then discard what it was given (the store's import is one transaction).
 * The problems are those of validating the whole array at once (Ajv reports
 * every error), in the same order: each item's schema errors, then the state
 * rules, then the duplicates.
 */
export async function* importBatches(text: string, contractFile: string = CONTRACT_PATH): AsyncGenerator<AgentRecord[], void, undefined> {
  const file = readImportFile(text);
  if (!file.ok) throw new InvalidImportError(file.problems);
  const data = file.data;
  const validators = validatorsFor(contractFile);
  if (!Array.isArray(data)) {
    if (validators.file(data)) return;
    throw new InvalidImportError((validators.file.errors ?? []).map((error) => describe(error, "")));
  }
  const problems: Problems = { schema: [], state: [], duplicate: { id: [], number: [] } };
  const duplicates = new Duplicates();
  let batch: AgentRecord[] = [];
  for (let start = 0; start < data.length; start += SLICE) {
    if (start > 0) await new Promise((resolve) => setImmediate(resolve));
    for (let index = start; index < Math.min(data.length, start + SLICE); index++) {
      const item: unknown = data[index];
      if (!validators.item(item)) problems.schema.push(...(validators.item.errors ?? []).map((error) => describe(error, `/${index}`)));
      const fields = isObject(item) ? item : {};
      problems.state.push(...stateProblems(fields, `[${index}]`));
      duplicates.check(fields, index, problems);
      batch.push(toRecord(fields));
    }
    const clean = allProblems(problems).length === 0;
    // The first batch is one slice, so that the database starts early.
    const full = batch.length >= (start === 0 ? SLICE : BATCH) || start + SLICE >= data.length;
    if (clean && full) yield batch;
    if (!clean || full) batch = [];
  }
  const all = allProblems(problems);
  if (all.length > 0) throw new InvalidImportError(all);
}

/** Reads and validates a whole import file: every agent, or every problem. */
export async function parseAgentImport(text: string, contractFile: string = CONTRACT_PATH): Promise<AgentImport> {
  const agents: AgentRecord[] = [];
  try {
    for await (const batch of importBatches(text, contractFile)) agents.push(...batch);
  } catch (error) {
    if (error instanceof InvalidImportError) return { ok: false, problems: error.problems };
    throw error;
  }
  return { ok: true, agents };
}

function toRecord(item: Record<string, unknown>): AgentRecord {
  return {
    id: item.id as number,
    number: item.number as string,
    extension: item.extension as string | null,
    context: item.context as string | null,
    logged: item.logged as boolean,
    paused: item.paused as boolean,
    paused_reason: item.paused_reason as string | null,
    state_interface: item.state_interface as string | null,
  };
}
