// npm run generate: rewrites generated/ from openapi.yaml and releases/
// (what it holds: scripts/lib/generated.ts).
// Usage: tsx scripts/generate.ts [outDir]   (default: generated)
import path from "node:path";
import { generatedDir, writeGenerated } from "./lib/generated.js";
import { projectRoot } from "./lib/project.js";

const outDir = process.argv[2] === undefined ? generatedDir : path.resolve(projectRoot, process.argv[2]);
console.log(await writeGenerated(outDir));
