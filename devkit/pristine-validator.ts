// express-openapi-validator as published, beside the patched one in
// node_modules: a copy of the installed package with our patches
// (patches/express-openapi-validator+*.patch) reversed, so the route
// matching test and the bench's framework ceiling can run both.
//
// The copy sits in node_modules/.cache/, so its own require() calls find
// the same dependencies (express, path-to-regexp, ajv) as the patched one.
import { createHash } from "node:crypto";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { applyPatch, parsePatch, reversePatch } from "diff";
import { repoRoot } from "./root.js";

const PACKAGE = "express-openapi-validator";

export interface PristineValidator {
  /** The copy's package folder (holding package.json and dist/). */
  dir: string;
  /** The files the patches changed, relative to the package folder. */
  patchedFiles: string[];
  remove(): Promise<void>;
}

/** Makes the copy; throws when a patch does not reverse cleanly (the installed package is not the patched one it expects). */
export async function pristineValidator(): Promise<PristineValidator> {
  const installed = path.join(repoRoot, "node_modules", PACKAGE);
  const patchFiles = (await readdir(path.join(repoRoot, "patches"))).filter((name) => name.startsWith(`${PACKAGE}+`) && name.endsWith(".patch"));
  if (patchFiles.length === 0) throw new Error(`no patch of ${PACKAGE} in patches/`);

  const cache = path.join(repoRoot, "node_modules", ".cache");
  await mkdir(cache, { recursive: true });
  const root = await mkdtemp(path.join(cache, "pristine-validator-"));
  const dir = path.join(root, PACKAGE);
  const patchedFiles: string[] = [];
  try {
    await cp(installed, dir, { recursive: true });
    for (const patchFile of patchFiles) {
      const patchText = await readFile(path.join(repoRoot, "patches", patchFile), "utf8");
      for (const filePatch of parsePatch(patchText)) {
        // patch-package names files from the project root: a/node_modules/<package>/<file>.
        const prefix = `a/node_modules/${PACKAGE}/`;
        const name = filePatch.oldFileName ?? "";
        if (!name.startsWith(prefix)) throw new Error(`${patchFile}: unexpected file ${name}`);
        const file = name.slice(prefix.length);
        const target = path.join(dir, file);
        const original = applyPatch(await readFile(target, "utf8"), reversePatch(filePatch));
        if (original === false) throw new Error(`${patchFile} does not reverse on node_modules/${PACKAGE}/${file}: is it applied (npm ci)?`);
        // The patch names the file it was made from by its git blob hash
        // (`index <before>..<after>`): the reversed file must be that one,
        // byte for byte, i.e. the file as published.
        const blob = createHash("sha1").update(`blob ${Buffer.byteLength(original)}\0`).update(original).digest("hex");
        if (!patchText.includes(`index ${blob.slice(0, 7)}..`)) {
          throw new Error(`${patchFile}: reversing it on ${file} does not give the file it was made from (git blob ${blob.slice(0, 7)})`);
        }
        await writeFile(target, original);
        patchedFiles.push(file);
      }
    }
  } catch (err) {
    await rm(root, { recursive: true, force: true });
    throw err;
  }
  return { dir, patchedFiles, remove: () => rm(root, { recursive: true, force: true }) };
}
