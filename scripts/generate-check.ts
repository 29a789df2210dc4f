// npm run generate:check: fails when generated/ is not what `npm run generate` would write now.
import { staleGenerated } from "./lib/generated.js";

const stale = await staleGenerated();
if (stale.length > 0) {
  console.error(`out of date with openapi.yaml or releases/: ${stale.join(", ")}\nrun \`npm run generate\` and commit the result`);
  process.exit(1);
}
console.log("generated/ is up to date with openapi.yaml");
