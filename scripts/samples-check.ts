// npm run samples:check: every operation of openapi.yaml has its curl,
// TypeScript and Python sample in samples/, every webhook its receivers,
// and each curl and Python sample sends its own operation's method and path
// (the TypeScript ones are checked by the type checker, against the client).
// The same reading the docs' agentd/code-samples decorator makes.
import { readFileSync } from "node:fs";
import { load } from "js-yaml";
import { codeSamples } from "../plugins/code-samples.js";
import { contractFile } from "./lib/project.js";

const { samples, problems } = codeSamples(load(readFileSync(contractFile, "utf8")) as Parameters<typeof codeSamples>[0]);
if (problems.length > 0) {
  console.error(`samples: ${problems.length} problem(s)\n${problems.map((problem) => `  ${problem}`).join("\n")}`);
  process.exit(1);
}
console.log(`samples: ${[...samples.values()].flat().length} samples of ${samples.size} operations and webhooks match openapi.yaml`);
