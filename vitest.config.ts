import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Every suite starts real processes (HTTPS servers, Prism, PostgreSQL
    // clients); generous time-outs keep a loaded CI machine from flaking.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Files run one at a time: the machine has two cores and most suites
    // start servers and child processes of their own.
    fileParallelism: false,
    reporters: ["default"],
  },
});
