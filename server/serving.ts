// What `agentd serve` runs, bundled on its own (scripts/bundle.ts) so that
// the command can load it with V8's code cache (cli/code-cache.ts): the
// embedded database's thread, then the server. One bundle, one copy of each
// module: the errors the server tells apart (DatabaseUnavailableError from
// the thread, DataDirBusyError for the command) are the same classes on
// both sides.
export { DataDirBusyError } from "./admin/lock.js";
export { startPgliteThread } from "./db/threaded-pglite.js";

/** The server itself, evaluated only when called: the thread starts first, and loads PGlite while this loads. */
export function loadServer(): Promise<typeof import("./serve.js")> {
  return import("./serve.js");
}
