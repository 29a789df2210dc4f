import { defineConfig } from "vitest/config";

// Files that start many processes, hold fixed resources (the machine's
// PostgreSQL database `test`, RabbitMQ queues, file-descriptor limits) or
// measure load run alone, one after another, after the others; every other
// file runs in parallel with its neighbours.
const ALONE = [
  "test/faults.test.ts",
  "test/floods.test.ts",
  "test/large-fleet.test.ts",
  "test/log-output.test.ts",
  "test/events-process.test.ts",
  "test/multi-instance.test.ts",
];

export default defineConfig({
  test: {
    // Every suite starts real processes (HTTPS servers, Prism, PostgreSQL
    // clients); generous time-outs keep a loaded CI machine from flaking.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    globalSetup: ["test/setup/build.ts"],
    reporters: ["default"],
    projects: [
      {
        extends: true,
        test: { name: "parallel", include: ["test/**/*.test.ts"], exclude: ALONE, maxWorkers: 3, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: "alone", include: ALONE, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
