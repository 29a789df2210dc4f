// npm run contract:diff -- [--from <release|file|git-ref>] [--to <...>] [--format markdown|json]
//
// The report a reviewer pastes into a review: what changed between two
// versions of the contract, grouped by operation, each change marked breaking
// or not. Default: the latest published release → the working openapi.yaml.
// A report, not a gate: it exits 0 whatever it finds (npm run contract:gate
// is what fails); only a usage error exits 2.
import { parseArgs } from "node:util";
import { changeReport, reportMarkdown } from "./lib/change-report.js";
import { frozenReleases } from "./lib/project.js";
import { BundleError, withScratch } from "./lib/redocly.js";
import { diffVersions, resolveVersion, workingVersion } from "./lib/versions.js";

const USAGE = "usage: npm run contract:diff -- [--from <release|file|git-ref>] [--to <release|file|git-ref>] [--format markdown|json]";

function usage(message: string): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}

let values: { from?: string; to?: string; format?: string; help?: boolean };
try {
  ({ values } = parseArgs({
    options: { from: { type: "string" }, to: { type: "string" }, format: { type: "string", default: "markdown" }, help: { type: "boolean", short: "h" } },
  }));
} catch (error) {
  usage((error as Error).message);
}
if (values.help) {
  console.log(
    `${USAGE}\n\nThe changes between two versions of the contract, grouped by operation, each marked breaking or not.\n` +
      "Default: the latest published release → the working openapi.yaml. Exits 0 whatever it finds, breaking changes\n" +
      "included (npm run contract:gate is what fails a build); 2 on bad arguments or a contract Redocly cannot bundle.",
  );
  process.exit(0);
}
if (values.format !== "markdown" && values.format !== "json") usage(`unknown format ${String(values.format)}`);

const latest = frozenReleases().at(-1);
const fromSpec = values.from ?? latest;
if (fromSpec === undefined) usage("no release is published yet (releases/ is empty): give --from");

/** A --from or --to that designates no version. */
class UnknownVersion extends Error {}

const report = await withScratch(async (scratch) => {
  const versions = await Promise.all([resolveVersion(fromSpec, scratch), values.to === undefined ? workingVersion() : resolveVersion(values.to, scratch)]).catch(
    (error: unknown) => {
      throw new UnknownVersion((error as Error).message);
    },
  );
  const [diff] = await diffVersions([versions]);
  return changeReport(versions[0].label, versions[1].label, diff!);
}).catch((error: unknown) => {
  // Exits here, outside withScratch, which has removed its folder by now.
  if (error instanceof UnknownVersion) usage(error.message);
  if (!(error instanceof BundleError)) throw error;
  console.error(`contract:diff: ${error.message}`);
  process.exit(2);
});

if (values.format === "json") console.log(JSON.stringify(report, null, 2));
else console.log(`## Contract changes: ${report.from} → ${report.to}\n\n${reportMarkdown(report)}`);
