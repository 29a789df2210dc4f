// A throwaway copy of the contract tooling (openapi.yaml, redocly.yaml and
// its plugin, the published releases, the samples, the scripts and devkit/ they use), for tests that run the
// release scripts on a deliberately broken contract. node_modules is linked,
// not copied; the scripts find everything from their own location, so they
// check the copy, never the repository.
//
//   const copy = await copyProject();
//   await copy.editContract((d) => delete d.paths["/agents"].get);
//   const gate = await copy.run("contract-gate");
//   await copy.remove();
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { dump, load } from "js-yaml";
import { repoRoot } from "../../devkit/root.js";
import { run, type RunResult } from "../../devkit/run.js";
import type { OpenApiDocument } from "./contract.js";

export interface ProjectCopy {
  dir: string;
  /** Parses `file` (YAML) of the copy, lets `edit` change it, writes it back. */
  editYaml(file: string, edit: (document: any) => void): Promise<void>;
  editContract(edit: (document: OpenApiDocument) => void): Promise<void>;
  /** Runs scripts/<script>.ts of the copy with the tsx loader; never throws on a non-zero exit. */
  run(script: string, args?: string[]): Promise<RunResult>;
  remove(): Promise<void>;
}

const COPIED = ["openapi.yaml", "redocly.yaml", "package.json", "plugins", "releases", "samples", "scripts", "devkit", "generated", path.join("docs", "redoc-template.hbs")];

export async function copyProject(): Promise<ProjectCopy> {
  const dir = await mkdtemp(path.join(tmpdir(), "agentd-project-"));
  await mkdir(path.join(dir, "docs"));
  for (const entry of COPIED) await cp(path.join(repoRoot, entry), path.join(dir, entry), { recursive: true });
  await symlink(path.join(repoRoot, "node_modules"), path.join(dir, "node_modules"), "dir");

  const editYaml = async (file: string, edit: (document: any) => void): Promise<void> => {
    const at = path.join(dir, file);
    const document: unknown = load(await readFile(at, "utf8"));
    edit(document);
    await writeFile(at, dump(document));
  };

  return {
    dir,
    editYaml,
    editContract: (edit) => editYaml("openapi.yaml", edit),
    run: (script, args = []) =>
      // tsx as a loader of one node process (its CLI would start a second one).
      run(process.execPath, ["--import", "tsx", path.join("scripts", `${script}.ts`), ...args], {
        cwd: dir,
        timeoutMs: 300_000,
        env: { ...process.env, NO_COLOR: "1" },
      }),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/**
 * Adds release `release` after the last one: to info.x-releases, to the
 * history table, and as an apis entry of redocly.yaml (like the latest one's).
 * What a contributor does before giving new elements `x-since: "<release>"`.
 */
export async function addRelease(copy: ProjectCopy, release: string, change: string): Promise<void> {
  await copy.editContract((d) => {
    const releases: string[] = d.info["x-releases"];
    const last = releases[releases.length - 1]!;
    releases.push(release);
    d.info.version = release;
    const row = new RegExp(`^(\\| ${last.replace(".", "\\.")} \\|.*)$`, "m");
    d.info.description = String(d.info.description).replace(row, `$1\n| ${release} | ${change} |`);
  });
  await copy.editYaml("redocly.yaml", (config) => {
    config.apis[`agentd@${release}`] = { root: "./openapi.yaml", decorators: { "agentd/release-view": { release }, "remove-unused-components": "on" } };
  });
}
