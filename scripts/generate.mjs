// Derives everything in generated/ from openapi.yaml:
//   openapi.ts     the contract's types (openapi-typescript)
//   operations.ts  each operation's method and path, and the one OperationId
//                  type, so that no other code repeats a path or an id.
//                  (The server reads each operation's x-required-acl from
//                  openapi.yaml itself, through the validator.)
//   releases/<release>.ts  the types of each published release
//                  (releases/openapi-<release>.yaml), exported as
//                  agentd/types/<release> for clients of older deployments.
// Usage: node scripts/generate.mjs [outDir]   (default: generated)
import { readdir, readFile, writeFile, mkdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import path from "node:path";
import openapiTS, { astToString } from "openapi-typescript";
import { parse } from "yaml";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outDir = path.resolve(root, process.argv[2] ?? "generated");
const specPath = path.join(root, "openapi.yaml");
const banner =
  "// This file is generated from openapi.yaml by `npm run generate`. Do not edit it by hand.\n";

export async function render() {
  const source = await readFile(specPath, "utf8");
  const spec = parse(source);

  const ast = await openapiTS(new URL(`file://${specPath}`));
  const types = banner + "\n" + astToString(ast);

  const methods = ["get", "put", "post", "delete", "patch", "head", "options"];
  const entries = [];
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
async function renderReleases() {
  const dir = path.join(root, "releases");
  const names = (await readdir(dir).catch(() => [])).filter((name) => /^openapi-.+\.yaml$/.test(name)).sort();
  const files = {};
  for (const name of names) {
    const release = name.slice("openapi-".length, -".yaml".length);
    const ast = await openapiTS(new URL(`file://${path.join(dir, name)}`));
    files[`releases/${release}.ts`] =
      `// This file is generated from releases/${name} by \`npm run generate\`. Do not edit it by hand.\n\n` + astToString(ast);
  }
  return files;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const files = await render();
  await mkdir(outDir, { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(outDir, name)), { recursive: true });
    await writeFile(path.join(outDir, name), text);
  }
  console.log(`generated ${Object.keys(files).join(", ")} in ${path.relative(root, outDir) || "."}`);
}
