import { defineConfig } from "vitest/config";
import { SlowFirst } from "./test/setup/slow-first.js";

// Files that flood the server and measure what it keeps (the open files
// under a connection flood, the memory under a stuck log reader) run alone,
// one after another, after the others: anything running beside them would
// change what they measure. Every other file owns its ports, directories and
// databases, and runs in parallel with its neighbours: most of their time is
// spent waiting on child processes and time-outs, so there are more workers
// than cores.
const ALONE = ["test/floods.test.ts", "test/log-output-memory.test.ts"];

// What both projects share. Not inherited with `extends: true`, because that
// would hand them the global setup too, and Vitest runs a global setup once
// per project that names it: the build would run three times.
const shared = {
  // Every suite starts real processes (HTTPS servers, Prism, PostgreSQL
  // clients); generous time-outs keep a loaded CI machine from flaking. They
  // bound a hang, and no test asserts a time with them. A test that starts
  // a process and works with it (the stateful mock with a fleet, three
  // instances under load) ran past 60 s on a machine that ran the whole
  // suite at half its usual speed, and one that ran the contract gate
  // several times past 120 s on another. Hooks start such processes too,
  // and get the same bound.
  testTimeout: 180_000,
  hookTimeout: 180_000,
  // expect.poll's own default (1 s) is a wait for a loaded CI machine to
  // fail: a docs page section Redoc had not yet rendered read as empty.
  expect: { poll: { timeout: 15_000 } },
  sequence: { sequencer: SlowFirst },
};

// isolate: false in the parallel project: a worker keeps the modules it has
// loaded (the server's, the contract compiled once) from one file to the
// next instead of loading them again for each. It holds because no test
// mocks a module, fakes timers or changes a global (process.env included)
// that it does not put back before it ends (tls.test.ts sets the umask
// around one call); each file's own state is still its own module's.
export default defineConfig({
  test: {
    ...shared,
    globalSetup: ["test/setup/build.ts"],
    reporters: ["default"],
    projects: [
      { test: { ...shared, name: "parallel", include: ["test/**/*.test.ts"], exclude: ALONE, maxWorkers: 4, isolate: false, sequence: { ...shared.sequence, groupOrder: 0 } } },
      { test: { ...shared, name: "alone", include: ALONE, maxWorkers: 1, sequence: { ...shared.sequence, groupOrder: 1 } } },
    ],
  },
});
