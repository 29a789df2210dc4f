// Fails when generated/ is not what `npm run generate` would write now.
import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { render } from "./generate.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const files = await render();
const stale = [];
for (const [name, text] of Object.entries(files)) {
  const committed = await readFile(path.join(root, "generated", name), "utf8").catch(() => null);
  if (committed !== text) stale.push(`generated/${name}`);
}
// A release's types left behind after its frozen file went.
const releaseTypes = await readdir(path.join(root, "generated", "releases")).catch(() => []);
for (const name of releaseTypes) if (!(`releases/${name}` in files)) stale.push(`generated/releases/${name}`);
if (stale.length > 0) {
  console.error(`out of date with openapi.yaml or releases/: ${stale.join(", ")}\nrun \`npm run generate\` and commit the result`);
  process.exit(1);
}
console.log("generated/ is up to date with openapi.yaml");
