// npm run mock -- [--release <release>] [prism mock options...]
//
// The Prism mock server on http://127.0.0.1:4010: the working openapi.yaml,
// or with --release a published release as it was frozen
// (releases/openapi-<release>.yaml), for a client of an older deployment.
// Every other argument goes to `prism mock` as it is; a --host/-h or
// --port/-p given here replaces the default.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { contractFile, frozenFile, frozenReleases, projectRoot } from "./lib/project.js";

const args = process.argv.slice(2);

/** Takes `--release <r>` or `--release=<r>` out of the arguments; undefined when absent. */
function takeRelease(): string | undefined {
  const at = args.findIndex((arg) => arg === "--release" || arg.startsWith("--release="));
  if (at < 0) return undefined;
  const [flag = ""] = args.splice(at, 1);
  const release = flag.includes("=") ? flag.slice("--release=".length) : args.splice(at, 1)[0];
  if (release === undefined || !existsSync(frozenFile(release))) {
    console.error(`--release needs a published release: ${frozenReleases().join(", ")}`);
    process.exit(2);
  }
  return release;
}

const release = takeRelease();
const spec = release === undefined ? contractFile : frozenFile(release);

const given = (long: string, short: string): boolean => args.some((arg) => arg === long || arg === short || arg.startsWith(`${long}=`));
const defaults = [...(given("--host", "-h") ? [] : ["--host", "127.0.0.1"]), ...(given("--port", "-p") ? [] : ["--port", "4010"])];

const prismArgs = ["mock", path.relative(projectRoot, spec), ...defaults, ...args];
console.error(`prism ${prismArgs.join(" ")}`);
const prism = spawn(path.join(projectRoot, "node_modules", ".bin", "prism"), prismArgs, { cwd: projectRoot, stdio: "inherit" });
// Stopping the mock stops Prism with it.
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => prism.kill(signal));
prism.on("exit", (code, signal) => process.exit(code ?? (signal === null ? 1 : 128)));
