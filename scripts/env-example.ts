// Writes `.env.example` from the one list of variables (server/config/variables.ts);
// with --check, fails when the committed file differs instead.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { repoRoot } from "../devkit/root.js";
import { renderEnvExample } from "../server/config/env-docs.js";

const file = path.join(repoRoot, ".env.example");
const text = renderEnvExample();
if (process.argv.includes("--check")) {
  const committed = await readFile(file, "utf8").catch(() => null);
  if (committed !== text) {
    console.error("out of date with server/config/variables.ts: .env.example\nrun `npm run generate` and commit the result");
    process.exit(1);
  }
  console.log(".env.example is up to date");
} else {
  await writeFile(file, text);
  console.log("generated .env.example");
}
