// An embedded database already through initdb, made once per `npm test` run
// by the global setup and copied for every PGlite a test creates. initdb
// (PostgreSQL bootstrapping its catalogue in WASM) is most of what creating a
// PGlite costs; copying its result is a file copy. The copy is not migrated,
// so tests still see every migration run, as a brand-new deployment does.
import { cp, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { inject } from "vitest";
import { openPglite } from "../../server/db/pglite.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** A data directory holding an initdb'd, unmigrated PGlite (test/setup/build.ts). */
    pgliteTemplate: string;
  }
}

/** Creates the template in a new temporary directory and returns its path. */
export async function createPgliteTemplate(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "agentd-pglite-template-"));
  const db = await openPglite(dir);
  await db.close();
  return dir;
}

/** Makes `dir` (which may not exist yet) a copy of the run's template: a new, unmigrated embedded database. */
export async function copyPgliteTemplate(dir: string): Promise<void> {
  // Never over an existing database: that would be a corrupt mix of two.
  await cp(inject("pgliteTemplate"), dir, { recursive: true, force: false, errorOnExist: true });
}
