// The order files start in: the long ones first, so that the parallel
// workers do not end on one long file started last. Vitest orders by the
// durations of the previous run, which a fresh clone (and CI) does not have;
// this list stands in for them. Files not listed follow in Vitest's order.
import { BaseSequencer, type TestSpecification } from "vitest/node";

const SLOW_FIRST = [
  "faults",
  "store-cache",
  "contract-gate",
  "events",
  "agentctl",
  "mock-stateful",
  "contract-suite",
  "server-api",
  "ops",
  "store",
  "server-process",
  "multi-instance",
  "events-process",
].map((name) => `/test/${name}.test.ts`);

const rank = (spec: TestSpecification): number => {
  const at = SLOW_FIRST.findIndex((suffix) => spec.moduleId.endsWith(suffix));
  return at < 0 ? SLOW_FIRST.length : at;
};

export class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    return sorted.map((spec, i) => ({ spec, i })).sort((a, b) => rank(a.spec) - rank(b.spec) || a.i - b.i).map(({ spec }) => spec);
  }
}
