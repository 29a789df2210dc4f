// `agentd import <file.json>`: a JSON array of agents, validated as a whole
// against the contract's AgentStatus schema (read from openapi.yaml at run
// time, never copied) before anything is written.
//
// origin_uuid belongs to the deployment, not to an agent: it is optional in
// the file and ignored when present (it must still be a UUID), so the output
// of `GET /agents` from any deployment can be imported as it is.
import type { ErrorObject } from "ajv/dist/2020.js";
import { CONTRACT_PATH, contractValidators, readContract } from "../contract.js";
import type { AgentRecord } from "../store/agent-store.js";

export type AgentImport = { ok: true; agents: AgentRecord[] } | { ok: false; problems: string[] };

/**
 * The contract with one schema added beside AgentStatus: the same status with
 * origin_uuid optional. Added to the document itself, so the `$ref`s inside
 * AgentStatus (AgentId, AgentNumber, PauseReason) resolve as they do there.
 */
function validatorFor(contractFile: string) {
  const document = readContract(contractFile);
  const schemas = (document.components as { schemas?: Record<string, unknown> } | undefined)?.schemas;
  const status = schemas?.AgentStatus as { required?: string[] } | undefined;
  if (schemas === undefined || status === undefined) throw new Error(`${contractFile} has no components.schemas.AgentStatus`);
  schemas.AgentImportFile = {
    type: "array",
    items: { ...status, required: (status.required ?? []).filter((name) => name !== "origin_uuid") },
  };
  return contractValidators(document)("#/components/schemas/AgentImportFile");
}

/** `/3/number` → `[3].number`; the root is `(file)`. */
function position(instancePath: string): string {
  const parts = instancePath.split("/").slice(1).map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"));
  if (parts.length === 0) return "(file)";
  return parts.map((part, i) => (/^[0-9]+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`)).join("");
}

function describe(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "required") return `${position(`${error.instancePath}/${String(params.missingProperty)}`)}: is required`;
  if (error.keyword === "additionalProperties") {
    return `${position(`${error.instancePath}/${String(params.additionalProperty)}`)}: is not an agent field`;
  }
  return `${position(error.instancePath)}: ${error.message ?? error.keyword}`;
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

function duplicateProblems(items: readonly Record<string, unknown>[]): string[] {
  const problems: string[] = [];
  for (const field of ["id", "number"] as const) {
    const firstAt = new Map<unknown, number>();
    items.forEach((item, index) => {
      const value = item[field];
      if (value === undefined || value === null) return;
      const first = firstAt.get(value);
      if (first === undefined) firstAt.set(value, index);
      else problems.push(`[${index}].${field}: duplicate ${field} ${JSON.stringify(value)} (first at [${first}])`);
    });
  }
  return problems;
}

/** Parses and validates an import file; either every agent or every problem, with its position. */
export function parseAgentImport(text: string, contractFile: string = CONTRACT_PATH): AgentImport {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { ok: false, problems: [`(file): not valid JSON: ${(error as Error).message}`] };
  }
  const validate = validatorFor(contractFile);
  const problems = validate(data) ? [] : (validate.errors ?? []).map(describe);
  if (Array.isArray(data)) {
    const items = data.map((item: unknown) => (isObject(item) ? item : {}));
    items.forEach((item, index) => problems.push(...stateProblems(item, `[${index}]`)));
    problems.push(...duplicateProblems(items));
  }
  if (problems.length > 0) return { ok: false, problems };

  const agents = (data as Record<string, unknown>[]).map(
    (item): AgentRecord => ({
      id: item.id as number,
      number: item.number as string,
      extension: item.extension as string | null,
      context: item.context as string | null,
      logged: item.logged as boolean,
      paused: item.paused as boolean,
      paused_reason: item.paused_reason as string | null,
      state_interface: item.state_interface as string | null,
    }),
  );
  return { ok: true, agents };
}
