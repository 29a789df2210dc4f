// What generated/ holds, derived from openapi.yaml and releases/:
//   openapi.ts     the contract's types (openapi-typescript)
//   operations.ts  each operation's method and path, and the one OperationId
//                  type, so that no other code repeats a path or an id.
//                  (The server reads each operation's x-required-acl from
//                  openapi.yaml itself, through the validator.)
//   releases/<release>.ts  the types of each published release
//                  (releases/openapi-<release>.yaml), exported as
//                  agentd/types/<release> for clients of older deployments.
// `npm run generate` writes it (scripts/generate.ts), `npm run generate:check`
// compares it (scripts/generate-check.ts), `npm run release` rewrites it.
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { load } from "js-yaml";
import openapiTS, { astToString } from "openapi-typescript";
import { contractFile, projectRoot, releasesDir } from "./project.js";

export const generatedDir = path.join(projectRoot, "generated");

const banner = "// This file is generated from openapi.yaml by `npm run generate`. Do not edit it by hand.\n";

const methods = ["get", "put", "post", "delete", "patch", "head", "options"] as const;

interface Contract {
  paths?: Record<string, Partial<Record<(typeof methods)[number], { operationId?: string }>> | null>;
}

/** Every file of generated/ (paths relative to it) and its text. */
export async function render(): Promise<Record<string, string>> {
  const spec = load(await readFile(contractFile, "utf8")) as Contract;

  const ast = await openapiTS(pathToFileURL(contractFile));
  const types = banner + "\n" + astToString(ast);

  const entries: string[] = [];
  for (const [route, item] of Object.entries(spec.paths ?? {})) {
    for (const method of methods) {
      const op = item?.[method];
      if (!op) continue;
      entries.push(
        `  ${op.operationId}: {\n` +
          `    method: ${JSON.stringify(method)},\n` +
          `    path: ${JSON.stringify(route)},\n` +
          `  },\n`,
      );
    }
  }
  const operations =
    banner +
    "\n" +
    "/** Every operation of the contract, keyed by operationId. */\n" +
    "export const operations = {\n" +
    entries.join("") +
    "} as const;\n\n" +
    "export type OperationId = keyof typeof operations;\n";

  return { "openapi.ts": types, "operations.ts": operations, ...(await renderReleases()) };
}

/** `releases/<release>.ts` for every frozen releases/openapi-<release>.yaml. */
async function renderReleases(): Promise<Record<string, string>> {
  const names = (await readdir(releasesDir).catch(() => [])).filter((name) => /^openapi-.+\.yaml$/.test(name)).sort();
  const files: Record<string, string> = {};
  for (const name of names) {
    const release = name.slice("openapi-".length, -".yaml".length);
    const ast = await openapiTS(pathToFileURL(path.join(releasesDir, name)));
    files[`releases/${release}.ts`] =
      `// This file is generated from releases/${name} by \`npm run generate\`. Do not edit it by hand.\n\n` + astToString(ast);
  }
  return files;
}

/** Writes every file `render` derives into `outDir`; returns the line to print. */
export async function writeGenerated(outDir: string = generatedDir): Promise<string> {
  const files = await render();
  await mkdir(outDir, { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(outDir, name)), { recursive: true });
    await writeFile(path.join(outDir, name), text);
  }
  for (const name of await leftBehind(outDir, files)) await rm(path.join(outDir, name), { force: true });
  return `generated ${Object.keys(files).join(", ")} in ${path.relative(projectRoot, outDir) || "."}`;
}

/** The files of generated/ that differ from what `render` derives now, or that it no longer derives. */
export async function staleGenerated(): Promise<string[]> {
  const files = await render();
  const stale: string[] = [];
  for (const [name, text] of Object.entries(files)) {
    const committed = await readFile(path.join(generatedDir, name), "utf8").catch(() => null);
    if (committed !== text) stale.push(`generated/${name}`);
  }
  for (const name of await leftBehind(generatedDir, files)) stale.push(`generated/${name}`);
  return stale;
}

/**
 * The release types in `dir` (`releases/<release>.ts`) that `files` no
 * longer has: left behind after a frozen file went. Only files named like
 * the ones `render` writes: nothing else in the folder is generate's.
 */
async function leftBehind(dir: string, files: Record<string, string>): Promise<string[]> {
  const entries = await readdir(path.join(dir, "releases"), { withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile() && /^\d+(\.\d+)*\.ts$/.test(entry.name))
    .map((entry) => `releases/${entry.name}`)
    .filter((name) => !(name in files));
}
