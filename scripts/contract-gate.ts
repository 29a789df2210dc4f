// npm run contract:gate: the one command a reviewer runs on a contract change.
// It fails, printing each finding (what, where, why), when
//   - a published release is no longer what openapi.yaml derives for it
//     (prose aside), e.g. a new element without x-since;
//   - openapi.yaml, taken as the next release, would break a client of the
//     latest published release (redocly diff, plus the plugin's own rules).
// test/contract-gate.test.ts runs it in every npm test.
import { checkBreaking } from "./lib/breaking-check.js";
import { formatFinding } from "./lib/finding.js";
import { checkFrozenReleases } from "./lib/frozen-check.js";
import { frozenReleases } from "./lib/project.js";

const [frozen, breaking] = await Promise.all([checkFrozenReleases(), checkBreaking()]);
const findings = [...frozen, ...breaking];
for (const finding of findings) console.log(formatFinding(finding));
if (findings.length > 0) {
  console.log(`\ncontract gate: FAILED with ${findings.length} ${findings.length === 1 ? "finding" : "findings"}`);
  process.exit(1);
}
const published = frozenReleases();
console.log(
  `contract gate: passed (${published.length} published releases are what openapi.yaml derives; ` +
    `it breaks no client of ${published.at(-1) ?? "any release"})`,
);
