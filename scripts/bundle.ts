// Bundles the two commands (`agentd`, `agentctl`) under dist/bin/, the files
// the package's `bin` runs (`npm run build`, after tsc): an entry file each,
// and the code they share or load later as chunks in dist/bin/chunks/.
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
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { build, type Metafile } from "esbuild";
import { repoRoot } from "../devkit/root.js";

const outdir = path.join(repoRoot, "dist", "bin");

const pkg = JSON.parse(await readFile(path.join(repoRoot, "package.json"), "utf8")) as { dependencies?: Record<string, string> };
const external = [
  ...Object.keys(pkg.dependencies ?? {}),
  // pg's optional native binding, loaded only when asked for (we never do); not installed.
  "pg-native",
];

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
  external,
  // The modules load when first imported, as in the unbundled code (agentd
  // loads the HTTP stack only to serve): each entry gets its own chunks.
  splitting: true,
  chunkNames: "chunks/[name]-[hash]",
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
await writeFile(path.join(outdir, "THIRD-PARTY-NOTICES.txt"), await notices(metafile));

/**
 * The licence of every package the bundle carries, as their licences ask of
 * a copy that is distributed: name, version, licence and its text.
 */
async function notices(meta: Metafile): Promise<string> {
  const folders = new Set<string>();
  for (const input of Object.keys(meta.inputs)) {
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
