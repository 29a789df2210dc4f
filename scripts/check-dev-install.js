// The first step of `npm ci`'s prepare in a development clone (then
// patch-package and the build). Plain JavaScript run by plain node, because
// it runs where the dev dependencies (patch-package, tsx, the compiler) may
// be missing: `npm ci --omit=dev`, or `npm ci` with NODE_ENV=production, in
// a clone, the way many Node services are deployed. There it says what to
// do instead and fails, rather than leaving the shell to report
// "patch-package: not found".
import { existsSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");

if (!existsSync(path.join(root, "node_modules", ".bin", "patch-package"))) {
  process.stderr.write(
    [
      "agentd: this clone was installed without its dev dependencies (--omit=dev, or NODE_ENV=production):",
      "nothing here can be patched, built or started.",
      "  To run it from this clone: npm ci && npm start",
      "  To deploy: build the release package in a full clone (npm ci && npm pack), then on the",
      "  server, in an empty directory: npm install --omit=dev ./agentd-<version>.tgz && npx agentd serve",
      "  (README.md, Deployment)",
      "",
    ].join("\n"),
  );
  process.exit(1);
}
