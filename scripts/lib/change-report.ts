// A `redocly diff` report as a reviewer reads it: changes grouped by
// operation, each marked breaking (an impact Redocly rates major: a client of
// the older version can fail) or not, in Markdown or JSON.
import { isObject } from "../../plugins/release-view.js";
import type { DiffChange, DiffReport } from "./redocly.js";

export interface Change {
  breaking: boolean;
  /** added, removed, or modified (with the property that changed). */
  kind: string;
  /** Where, inside the operation (or the document, for the whole API). */
  where: string;
  /** What was added or removed there, when its place alone does not say it (`the tag events`); empty otherwise. */
  what: string;
  /** What the diff rules say about it; empty for changes no rule flags. */
  why: string[];
}

export interface ChangeGroup {
  /** `GET /agents`, `webhook agentPaused`, or `Whole API` for servers, security and the rest. */
  operation: string;
  changes: Change[];
}

export interface ChangeReport {
  from: string;
  to: string;
  breaking: number;
  nonBreaking: number;
  groups: ChangeGroup[];
}

export const WHOLE_API = "Whole API";

const unescape = (segment: string): string => segment.replace(/~1/g, "/").replace(/~0/g, "~");

/**
 * A location inside an operation in a reader's words:
 * `responses/200/content/application/json/schema/items/properties/paused`
 * becomes `response 200 body[].paused`.
 */
function readable(where: string): string {
  return where
    .replace(/^responses\/(\w+)\/content\/[^/]+\/[^/]+\/schema/, "response $1 body")
    .replace(/^requestBody\/content\/[^/]+\/[^/]+\/schema/, "request body")
    .replace(/^responses\/(\w+)/, "response $1")
    .replace(/^requestBody/, "request body")
    .replace(/\/properties\//g, ".")
    .replace(/\/items(?=\/|\.|$)/g, "[]");
}

const OPERATION_METHOD = /^(get|put|post|delete|patch|head|options|trace)$/;

/** Splits `#/paths/~1agents/get/responses/200` into the operation and the rest. */
function locate(pointer: string): { operation: string; where: string } {
  const segments = pointer.replace(/^#\/?/, "").split("/").map(unescape);
  if (segments[0] === "paths" && segments[1] !== undefined) {
    const method = segments[2];
    if (method !== undefined && OPERATION_METHOD.test(method)) {
      return { operation: `${method.toUpperCase()} ${segments[1]}`, where: readable(segments.slice(3).join("/")) };
    }
    return { operation: segments[1], where: segments.slice(2).join("/") };
  }
  // A webhook is an operation too, whose request the service sends.
  if (segments[0] === "webhooks" && segments[1] !== undefined) {
    const method = segments[2];
    const inside = method !== undefined && OPERATION_METHOD.test(method) ? segments.slice(3) : segments.slice(2);
    return { operation: `webhook ${segments[1]}`, where: readable(inside.join("/")) };
  }
  return { operation: WHOLE_API, where: segments.join("/") };
}

/** `modified maxLength 80 → 40`, `modified required + state_interface`. */
function modification(change: DiffChange): string {
  if (change.property === "description" || change.property === "summary") return "";
  const before = change.base?.value;
  const after = change.revision?.value;
  if (Array.isArray(before) || Array.isArray(after)) {
    const was = Array.isArray(before) ? before.map(String) : [];
    const is = Array.isArray(after) ? after.map(String) : [];
    const added = is.filter((item) => !was.includes(item)).map((item) => `+ ${item}`);
    const removed = was.filter((item) => !is.includes(item)).map((item) => `− ${item}`);
    return [...added, ...removed].join(", ");
  }
  const show = (value: unknown): string => (value === undefined ? "(none)" : typeof value === "string" && value.length > 60 ? "(text)" : JSON.stringify(value));
  return typeof before === "object" || typeof after === "object" ? "" : `${show(before)} → ${show(after)}`;
}

type Node = Record<string, unknown>;
const quoted = (names: string[]): string => names.map((name) => `\`${name}\``).join(", ");

/** The error identifiers a schema allows for `error`: its `const`, `enum` or `oneOf` of consts. */
function errorIdentifiers(schema: Node): string[] {
  const error = isObject(schema.properties) ? schema.properties.error : undefined;
  if (!isObject(error)) return [];
  if (typeof error.const === "string") return [error.const];
  if (Array.isArray(error.enum)) return error.enum.filter((value): value is string => typeof value === "string");
  if (Array.isArray(error.oneOf)) return error.oneOf.flatMap((option) => (isObject(option) && typeof option.const === "string" ? [option.const] : []));
  return [];
}

/**
 * What an added or removed element is, where its pointer says only where
 * it was (`tags/1`, `allOf/2`): the tag's name, the webhooks', headers' and
 * components' names, a state rule's text, the error identifiers a member
 * of an error body allows.
 */
function subject(change: DiffChange, where: string): string {
  if (change.kind === "modified") return "";
  const value = change.kind === "added" ? change.revision?.value : change.base?.value;
  if (!isObject(value)) return "";
  if (/^tags\/\d+$/.test(where) && typeof value.name === "string") return `the tag \`${value.name}\``;
  if (where === "webhooks") return `the webhooks ${quoted(Object.keys(value))}`;
  if (/(^|\/)headers$/.test(where)) return `the ${Object.keys(value).length === 1 ? "header" : "headers"} ${quoted(Object.keys(value))}`;
  if (where === "components") return Object.entries(value).map(([kind, entries]) => `${kind} ${quoted(isObject(entries) ? Object.keys(entries) : [])}`).join("; ");
  if ("if" in value && "then" in value && typeof value.description === "string") {
    return `the state rule "${value.description.split(/\n\s*\n/)[0]!.replace(/\s+/g, " ").trim()}"`;
  }
  const identifiers = errorIdentifiers(value);
  if (identifiers.length > 0) return `the error ${identifiers.length === 1 ? "identifier" : "identifiers"} ${quoted(identifiers)}`;
  return "";
}

function describe(change: DiffChange): Change {
  const { where } = locate(change.path);
  const kind = change.kind === "modified" && change.property !== undefined ? `modified ${change.property} ${modification(change)}`.trimEnd() : change.kind;
  return {
    breaking: change.impact === "major",
    kind,
    where,
    what: subject(change, where),
    why: change.verdicts.map((verdict) => `${verdict.message} (${verdict.ruleId})`),
  };
}

/**
 * Redocly reports a member of an error body whose identifiers changed
 * (`const` → `oneOf` of two) as that member removed and another added at
 * the same place, and the removal reads as if the identifier were gone.
 * The pair is reported as one change of the identifiers, breaking if
 * either half was.
 */
function identifiersChanged(removed: DiffChange, added: DiffChange): Change | null {
  const was = isObject(removed.base?.value) ? errorIdentifiers(removed.base.value) : [];
  const is = isObject(added.revision?.value) ? errorIdentifiers(added.revision.value) : [];
  if (was.length === 0 || is.length === 0) return null;
  const gained = is.filter((name) => !was.includes(name)).map((name) => `+ \`${name}\``);
  const lost = was.filter((name) => !is.includes(name)).map((name) => `− \`${name}\``);
  const rules = [...new Set([...removed.verdicts, ...added.verdicts].map((verdict) => verdict.ruleId))];
  return {
    breaking: removed.impact === "major" || added.impact === "major",
    kind: "modified",
    where: locate(removed.path).where,
    what: `the error identifiers ${[...gained, ...lost].join(", ")}`,
    why: rules.length > 0 ? [`the identifiers \`error\` can take changed (${rules.join(", ")})`] : [],
  };
}

/** The report's changes, each error body member whose identifiers changed as one (identifiersChanged). */
function described(changes: readonly DiffChange[]): { path: string; change: Change }[] {
  const paired = new Set<DiffChange>();
  const out: { path: string; change: Change }[] = [];
  for (const change of changes) {
    if (paired.has(change)) continue;
    const partner = change.kind === "removed" ? changes.find((other) => other.kind === "added" && other.path === change.path && !paired.has(other)) : undefined;
    const merged = partner && identifiersChanged(change, partner);
    if (partner && merged) paired.add(partner);
    out.push({ path: change.path, change: merged ?? describe(change) });
  }
  return out;
}

/** The version history's own markers, left out of every report: what they mark is reported itself. */
const VERSION_MARKERS = ["x-since", "x-until", "x-badges"];

/**
 * Groups a diff by operation, breaking changes first. `info` (the version
 * number and the prose of the front page) changes with every release and is
 * left out.
 */
export function changeReport(from: string, to: string, report: DiffReport): ChangeReport {
  const groups = new Map<string, Change[]>();
  const reported = report.changes.filter(
    (change) => !/^#\/info(\/|$)/.test(change.path) && (change.property === undefined || !VERSION_MARKERS.includes(change.property)),
  );
  for (const { path, change } of described(reported)) {
    const { operation } = locate(path);
    groups.set(operation, [...(groups.get(operation) ?? []), change]);
  }
  const ordered = [...groups.entries()]
    .sort(([a], [b]) => (a === WHOLE_API ? -1 : b === WHOLE_API ? 1 : 0))
    .map(([operation, changes]) => ({ operation, changes: changes.sort((a, b) => Number(b.breaking) - Number(a.breaking)) }));
  const all = ordered.flatMap((group) => group.changes);
  return {
    from,
    to,
    breaking: all.filter((change) => change.breaking).length,
    nonBreaking: all.filter((change) => !change.breaking).length,
    groups: ordered,
  };
}

/** The report as Markdown, to paste into a review; `level` is the heading level of each operation. */
export function reportMarkdown(report: ChangeReport, level = 3): string {
  const lines: string[] = [];
  if (report.groups.length === 0) return "No change.\n";
  lines.push(
    report.breaking > 0
      ? `**Breaking:** ${report.breaking} ${report.breaking === 1 ? "change" : "changes"} can break a client of ${report.from}; ${report.nonBreaking} other.`
      : `**Not breaking:** ${report.nonBreaking} ${report.nonBreaking === 1 ? "change" : "changes"}, none that can break a client of ${report.from}.`,
    "",
  );
  for (const group of report.groups) {
    lines.push(`${"#".repeat(level)} ${group.operation}`, "");
    for (const change of group.changes) {
      const mark = change.breaking ? "**breaking**" : "non-breaking";
      const where = (change.where === "" ? "" : ` \`${change.where}\``) + (change.what === "" ? "" : ` (${change.what})`);
      const why = change.why.length > 0 ? `: ${change.why.join(" ")}` : "";
      lines.push(`- ${mark} · ${change.kind}${where}${why}`);
    }
    lines.push("");
  }
  return lines.join("\n");
}
