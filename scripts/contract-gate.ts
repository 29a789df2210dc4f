// npm run contract:gate: the one command a reviewer runs on a contract change.
// It fails, printing each finding (what, where, why), when
//   - a published release is no longer what openapi.yaml derives for it
//     (prose aside), e.g. a new element without x-since; or the record
//     around them is off: releases/CHANGELOG.md not what they derive,
//     info.version not the newest listed release;
//   - openapi.yaml, taken as the next release, would break a client of the
//     latest published release (redocly diff, plus the plugin's own rules).
// `--only frozen` or `--only breaking` runs one of the two checks (the
// gate's own tests use it for cases that concern only one of them).
// npm run check runs the whole gate on the repository.
import { parseArgs } from "node:util";
import { checkBreaking } from "./lib/breaking-check.js";
import { formatFinding } from "./lib/finding.js";
import { BundleError } from "./lib/redocly.js";
import { checkFrozenReleases } from "./lib/frozen-check.js";
import { frozenReleases } from "./lib/project.js";

const { values } = parseArgs({ options: { only: { type: "string" } } });
if (values.only !== undefined && values.only !== "frozen" && values.only !== "breaking") {
  console.error(`contract gate: --only takes frozen or breaking, not ${values.only}`);
  process.exit(2);
}
const none = Promise.resolve([]);
// Settled, not raced: each check removes its scratch folder before the gate ends.
const outcomes = await Promise.allSettled([
  values.only === "breaking" ? none : checkFrozenReleases(),
  values.only === "frozen" ? none : checkBreaking(),
]);
const failures = outcomes.flatMap((outcome) => (outcome.status === "rejected" ? [outcome.reason as unknown] : []));
if (failures.length > 0) {
  // A contract Redocly cannot bundle (a marker naming no listed release, say)
  // is a finding: what Redocly said, without a stack trace. Anything else is
  // a fault of the gate itself, thrown as it is.
  const refused = failures.find((failure): failure is BundleError => failure instanceof BundleError);
  if (refused === undefined) throw failures[0];
  console.log(`✗ ${refused.message}\n\ncontract gate: FAILED: the release views cannot be derived from openapi.yaml`);
  process.exit(1);
}
const [frozen, breaking] = outcomes.map((outcome) => (outcome.status === "fulfilled" ? outcome.value : []));
const findings = [...frozen!, ...breaking!];
for (const finding of findings) console.log(formatFinding(finding));
if (findings.length > 0) {
  console.log(`\ncontract gate: FAILED with ${findings.length} ${findings.length === 1 ? "finding" : "findings"}`);
  process.exit(1);
}
const published = frozenReleases();
if (values.only !== undefined) {
  console.log(`contract gate (${values.only} only): passed`);
  process.exit(0);
}
console.log(
  `contract gate: passed (${published.length} published releases are what openapi.yaml derives; ` +
    `it breaks no client of ${published.at(-1) ?? "any release"})`,
);
