// Bundles the two commands (`agentd`, `agentctl`) under dist/bin/, the files
// the package's `bin` runs (`npm run build`, after tsc): an entry file each,
// and the code they share or load later as chunks in dist/bin/chunks/; and
// the server that `agentd serve` runs, as one CommonJS file beside them
// (chunks/serving.cjs, below).
//
// Why a bundle: the package installs without the dev toolchain and still runs
// the patched express-openapi-validator (patches/), which `npm install
// <tarball>` would never patch: the bundle carries the patched code from this
// clone's node_modules. A start also reads a few files instead of resolving
// and reading each module of node_modules, a cost every start would pay.
//
// What stays out of the bundle is exactly the package's runtime
// `dependencies`, installed beside it: PGlite, which loads its WASM and data
// files from its own package folder; fs-native-extensions, the data-directory
// lock's native addon, whose prebuilt binary for the platform is found in its
// own package folder too; undici, which the server's outgoing requests and the
// typed client use; and openapi-fetch, which the typed client (dist/client/,
// imported as `agentd/client`) needs as published. Everything else the
// commands import is a devDependency, bundled.
import { execFileSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { build } from "esbuild";
import { repoRoot } from "../devkit/root.js";
import { buildContract, CONTRACT_PATH } from "../server/contract.js";

const outdir = path.join(repoRoot, "dist", "bin");

const pkg = JSON.parse(await readFile(path.join(repoRoot, "package.json"), "utf8")) as { dependencies?: Record<string, string> };
const external = [
  ...Object.keys(pkg.dependencies ?? {}),
  // pg's optional native binding, loaded only when asked for (we never do); not installed.
  "pg-native",
];

// openapi.yaml parsed once here, for the bundles to carry: contract.ts uses
// the parse while openapi.yaml is still the text it came from. (Strings:
// esbuild would wrap an object in an initialiser that every module calls.)
const contract = buildContract(await readFile(CONTRACT_PATH, "utf8"));
const builtContract = { BUILT_CONTRACT_SHA256: JSON.stringify(contract.sha256), BUILT_CONTRACT_JSON: JSON.stringify(contract.json), ...builtFrom() };

/**
 * The commit this clone is at, for the version the commands show
 * (buildVersion, server/package-root.ts): `.dirty` after it when tracked
 * files differ from it. Nothing without git (a copy of the sources).
 */
function builtFrom(): { BUILT_FROM_COMMIT?: string } {
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repoRoot, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  try {
    // Sources copied into another repository's tree are not its commit.
    if (realpathSync(git("rev-parse", "--show-toplevel")) !== realpathSync(repoRoot)) return {};
    const commit = git("rev-parse", "--short=12", "HEAD");
    const dirty = git("status", "--porcelain", "--untracked-files=no") !== "";
    return { BUILT_FROM_COMMIT: JSON.stringify(dirty ? `${commit}.dirty` : commit) };
  } catch {
    return {};
  }
}

// A fresh folder: chunk names carry hashes, and old chunks would ship too.
await rm(outdir, { recursive: true, force: true });
const { metafile } = await build({
  entryPoints: {
    agentd: path.join(repoRoot, "server", "cli", "agentd.ts"),
    agentctl: path.join(repoRoot, "client", "agentctl.ts"),
    // The embedded database's thread, which threaded-pglite.ts (a chunk) starts from its own folder.
    "chunks/pglite-thread": path.join(repoRoot, "server", "db", "pglite-thread.ts"),
  },
  outdir,
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  // serving.ts is the CommonJS bundle below; load-serving.ts imports it as
  // a module only where that bundle is not (tsx, tsc's output).
  external: [...external, "../serving.js"],
  // The modules load when first imported, as in the unbundled code (an
  // admin command loads only the database it opens): each entry gets its
  // own chunks.
  splitting: true,
  chunkNames: "chunks/[name]-[hash]",
  define: builtContract,
  // The CommonJS packages inside expect require, __filename and __dirname,
  // which an ES module does not have.
  banner: {
    js: [
      'import { createRequire as __agentdCreateRequire } from "node:module";',
      'import { fileURLToPath as __agentdFileURLToPath } from "node:url";',
      "const require = __agentdCreateRequire(import.meta.url);",
      "const __filename = __agentdFileURLToPath(import.meta.url);",
      'const __dirname = __agentdFileURLToPath(new URL(".", import.meta.url));',
    ].join("\n"),
  },
  metafile: true,
  logLevel: "warning",
});

// What `agentd serve` runs (server/serving.ts), as one CommonJS file beside
// the chunks: the serve command loads it with V8's code cache
// (server/cli/load-serving.ts), which Node 20 offers only to scripts, not to
// ES modules. The server's lazily loaded parts are inside it, evaluated only
// when first imported.
const serving = path.join(outdir, "chunks", "serving.cjs");
const { metafile: servingMetafile } = await build({
  entryPoints: [path.join(repoRoot, "server", "serving.ts")],
  outfile: serving,
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  external,
  // The modules find their files (the contract, the migrations, the
  // database's thread) from their own URL, which CommonJS has as __filename.
  define: { "import.meta": "__agentdImportMeta", ...builtContract },
  // Strict, as the ES modules it is made of: the directive must come first,
  // before the banner's own line.
  banner: { js: '"use strict";\nconst __agentdImportMeta = { url: require("node:url").pathToFileURL(__filename).href };' },
  metafile: true,
  logLevel: "warning",
});
// V8 holds a script's source for as long as it runs, at one byte per
// character only if every character fits in one: half the memory of two.
// esbuild writes the code's own non-ASCII characters as escapes (its ASCII
// charset), but copies the few in comments as they are.
const servingText = await readFile(serving, "utf8");
if (!servingText.startsWith('"use strict";')) throw new Error(`${path.relative(repoRoot, serving)} does not begin with "use strict"`);
await writeFile(serving, servingText.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`));

// Every output holding contract.ts must carry the parsed contract, or its
// starts would parse the YAML again without anyone noticing.
const contractOutputs = [...Object.entries(metafile.outputs), ...Object.entries(servingMetafile.outputs)]
  .filter(([, output]) => Object.keys(output.inputs).some((input) => input.endsWith("server/contract.ts")))
  .map(([file]) => path.resolve(file));
if (contractOutputs.length < 2) throw new Error(`contract.ts is in ${contractOutputs.length} of the outputs, expected the commands' chunks and serving.cjs`);
for (const file of contractOutputs) {
  if (!(await readFile(file, "utf8")).includes(contract.sha256)) throw new Error(`${path.relative(repoRoot, file)} does not carry the parsed contract`);
}

// A dynamic import() fails in the bundle: a script compiled by vm has no
// import callback unless given one, and Node 20 loses that callback in code
// compiled from a cache. esbuild leaves one, as written, for a package
// outside the bundle: refused here, not found by a server that cannot
// start. (A computed one, such as rate-limiter-flexible's for the
// Drizzle backend we never use, is not in the metafile.)
const dynamicImports = Object.values(servingMetafile.outputs).flatMap((output) => output.imports.filter((i) => i.kind === "dynamic-import"));
if (dynamicImports.length > 0) {
  throw new Error(`${path.relative(repoRoot, serving)} imports ${dynamicImports.map((i) => i.path).join(", ")} with import(): require it instead`);
}

const inputs = { ...metafile.inputs, ...servingMetafile.inputs };
await writeFile(path.join(outdir, "THIRD-PARTY-NOTICES.txt"), await notices(Object.keys(inputs)));

/**
 * The licence of every package the bundle carries, as their licences ask of
 * a copy that is distributed: name, version, licence and its text.
 */
async function notices(inputs: string[]): Promise<string> {
  const folders = new Set<string>();
  for (const input of inputs) {
    const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match) folders.add(path.resolve(repoRoot, match[1]!));
  }
  const sections: string[] = [];
  for (const folder of [...folders].sort()) {
    const about = JSON.parse(await readFile(path.join(folder, "package.json"), "utf8")) as { name: string; version: string; license?: string };
    const licenceFile = (await readdir(folder)).find((name) => /^licen[cs]e/i.test(name));
    const text = licenceFile === undefined ? "(no licence file in the package)" : (await readFile(path.join(folder, licenceFile), "utf8")).trim();
    sections.push(`${about.name} ${about.version} (${about.license ?? "licence not declared"})\n\n${text}`);
  }
  return `The agentd and agentctl bundles in this folder include these packages:\n\n${sections.join(`\n\n${"-".repeat(72)}\n\n`)}\n`;
}
