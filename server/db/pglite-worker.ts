import { Worker } from "node:worker_threads";

/**
 * Starts the embedded database's thread (pglite-thread.ts), which loads
 * PGlite at once and waits for threaded-pglite.ts to open the database.
 * Apart from threaded-pglite.ts so that the serve command can start it
 * before it loads the server's code. Unreferenced: the thread keeps the
 * process alive only while it owes an answer (threaded-pglite.ts refs it
 * then), as a database connection would.
 */
export function spawnPgliteWorker(): Worker {
  const entry = threadEntry();
  const worker = new Worker(entry.program, { eval: entry.eval });
  worker.unref();
  return worker;
}

/**
 * The thread's program beside this module: compiled JavaScript in the build
 * and the package. Under the tests this module is the TypeScript source,
 * which a worker cannot load by itself: a one-line script registers tsx (the
 * development scripts' loader) in the thread first.
 */
function threadEntry(): { program: string | URL; eval: boolean } {
  if (!import.meta.url.endsWith(".ts")) return { program: new URL("./pglite-thread.js", import.meta.url), eval: false };
  const tsx = import.meta.resolve("tsx/esm/api");
  const program = new URL("./pglite-thread.ts", import.meta.url).href;
  return {
    program: `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(program)}); });`,
    eval: true,
  };
}
