// The release package, as an operator deploys it: `npm pack` here (the
// test run's global setup built dist/, as `npm pack`'s prepare would), then,
// in an empty folder outside the repository, `npm install --omit=dev` of the
// tarball, `npx agentd serve`, and `npx agentctl` and `npx agentd token
// create` against it. Nothing of the repository is reachable from there: the
// server finds its contract and migrations in the installed package.
//
// The install asks the npm registry for the runtime dependencies' metadata
// (`--prefer-offline` takes what npm's cache has; `npm ci` put their
// tarballs there).
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { envWithoutAgentd } from "../devkit/child-env.js";
import { repoRoot } from "../devkit/root.js";
import { run } from "../devkit/run.js";
import { findContract } from "../server/contract.js";
import { findMigrations } from "../server/db/migrations.js";
import { freshPostgres, postgresTestUrl } from "./helpers/databases.js";
import { callHttps } from "./helpers/https.js";

const START_TIMEOUT_MS = 60_000;

/** What a packed file may be: the bundled commands, the typed client and types, the contract, releases, migrations, docs. */
const SHIPPED = [
  /^package\.json$/,
  /^README\.md$/,
  /^LICENSE$/,
  /^openapi\.yaml$/,
  /^\.env\.example$/,
  /^releases\/[^/]+\.(yaml|md)$/,
  /^server\/db\/migrations\/\d{3}-[a-z0-9-]+\.sql$/,
  /^dist\/bin\/[^/]+\.(js|txt)$/,
  /^dist\/bin\/chunks\/[^/]+\.js$/,
  // What `agentd serve` runs, loaded with V8's code cache (scripts/bundle.ts).
  /^dist\/bin\/chunks\/serving\.cjs$/,
  /^dist\/client\/(index|checks|errors|node-tls|node-tls-browser)\.(js|d\.ts)$/,
  /^dist\/generated\/(releases\/)?[^/]+\.(js|d\.ts)$/,
];

interface PackResult {
  filename: string;
  files: { path: string }[];
}

/** npm's own environment for the child npm: the test runner's npm_* variables (npm test's) left out, its cache, registry and proxies kept. */
function npmEnv(): NodeJS.ProcessEnv {
  const keep = /^npm_config_(cache|registry|userconfig|globalconfig|proxy|https_proxy|noproxy|strict_ssl|cafile)$/i;
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(envWithoutAgentd())) {
    if (!name.toLowerCase().startsWith("npm_") || keep.test(name)) env[name] = value;
  }
  return env;
}

async function runOk(file: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<string> {
  const result = await run(file, args, { cwd: options.cwd, env: options.env ?? npmEnv(), timeoutMs: options.timeoutMs ?? 120_000 });
  if (result.code !== 0) throw new Error(`${file} ${args.join(" ")} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

describe("the release package: npm pack, npm install --omit=dev, npx agentd serve, npx agentctl", () => {
  let work: string;
  let installDir: string;
  let packed: PackResult;
  let server: ChildProcess | undefined;
  let banner = "";

  /** The server and everything npx started for it: its own process group. */
  const killServer = () => {
    if (server?.pid !== undefined && server.exitCode === null && server.signalCode === null) {
      try {
        process.kill(-server.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  };

  beforeAll(async () => {
    // Outside the repository, so nothing above the install can stand in for the package's own files.
    work = await mkdtemp(path.join(os.tmpdir(), "agentd-package-"));
    installDir = path.join(work, "deployment");
    await mkdir(installDir);
    await writeFile(path.join(installDir, "package.json"), JSON.stringify({ name: "agentd-deployment", private: true }));

    // --ignore-scripts: the global setup already built dist/, and a second
    // build here would rewrite it under the other test files' feet.
    const out = await runOk("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], { cwd: repoRoot });
    packed = (JSON.parse(out) as PackResult[])[0]!;
    await runOk("npm", ["install", "--omit=dev", "--prefer-offline", "--no-audit", "--no-fund", path.join(work, packed.filename)], { cwd: installDir });

    process.once("exit", killServer);
    server = spawn("npx", ["--no", "agentd", "serve"], {
      cwd: installDir,
      env: {
        ...npmEnv(),
        AGENTD_DATA_DIR: path.join(work, "data"),
        AGENTD_PORT: "0",
        AGENTD_OPS_PORT: "off",
        AGENTD_DRAIN_DELAY: "0",
        AGENTD_LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    server.stdout!.resume();
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`agentd did not print its banner:\n${banner}`)), START_TIMEOUT_MS);
      server!.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
        banner += chunk;
        if (/Try it:/.test(banner)) {
          clearTimeout(timer);
          resolve();
        }
      });
      server!.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`npx agentd serve exited ${String(code)}:\n${banner}`));
      });
    });
  }, 240_000);

  afterAll(async () => {
    if (server?.pid !== undefined && server.exitCode === null) {
      const closed = new Promise((resolve) => server!.once("close", resolve));
      process.kill(-server.pid, "SIGTERM");
      await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      killServer();
    }
    process.off("exit", killServer);
    if (work !== undefined) await rm(work, { recursive: true, force: true });
  });

  const served = () => {
    const url = /agentd is serving (https:\/\/\S+)/.exec(banner)?.[1];
    const certPath = /certificate: (.+)/.exec(banner)?.[1]?.trim();
    const token = /shown only this once: (\S+)/.exec(banner)?.[1];
    if (url === undefined || certPath === undefined || token === undefined) throw new Error(`no URL, certificate or admin token in:\n${banner}`);
    return { url, certPath, token };
  };
  const agentctlEnv = (token: string) => ({ ...npmEnv(), AGENTD_URL: served().url, AGENTD_TOKEN: token, AGENTD_CACERT: served().certPath });

  it("packs the commands, the typed client, the contract, the releases, the migrations, the README and the licence, and nothing else", () => {
    const files = packed.files.map((file) => file.path);
    expect(files.filter((file) => !SHIPPED.some((pattern) => pattern.test(file)))).toEqual([]);
    expect(files.filter((file) => /(^|\/)(test|bench|devkit|scripts|src)\//.test(file) || /\.map$/.test(file) || (/\.ts$/.test(file) && !/\.d\.ts$/.test(file)))).toEqual([]);
    for (const needed of ["dist/bin/agentd.js", "dist/bin/agentctl.js", "dist/client/index.js", ".env.example", "openapi.yaml", "releases/openapi-17.05.yaml", "server/db/migrations/001-agents-and-tokens.sql", "README.md", "LICENSE"]) {
      expect(files).toContain(needed);
    }
    // Both sides of package.json's `browser` map ship, or a web app's bundler would look for a file that is not there.
    const browserMap = (JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { browser: Record<string, string> }).browser;
    for (const [from, to] of Object.entries(browserMap)) expect(files).toEqual(expect.arrayContaining([from.slice(2), to.slice(2)]));
  });

  it("installs no compiler, none of our @types and no unpatched validator or ajv: the bundle carries the patched ones", () => {
    const devDependencies = Object.keys((JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { devDependencies: Record<string, string> }).devDependencies);
    const modules = path.join(installDir, "node_modules");
    const installed = readdirSync(modules).flatMap((name) => (name.startsWith("@") ? readdirSync(path.join(modules, name)).map((sub) => `${name}/${sub}`) : [name]));
    expect(installed).toContain("agentd");
    expect(installed).not.toContain("typescript");
    expect(installed.filter((name) => name.startsWith("@types/") && devDependencies.includes(name))).toEqual([]);
    expect(installed).not.toContain("express-openapi-validator");

    // The server's bundle, which `agentd serve` runs.
    const serving = readFileSync(path.join(modules, "agentd", "dist", "bin", "chunks", "serving.cjs"), "utf8");
    expect(serving).toContain("const regexpObj = routeMatcher(expressRoute, pathOpts);");
    expect(installed).not.toContain("ajv");
    expect(serving).toContain("const finiteString = opts.strictNumbers");
  });

  it("finds its contract and migrations in the installed package, not anywhere above it", () => {
    const from = path.join(installDir, "node_modules", "agentd", "dist", "bin", "chunks");
    const packageDir = path.join(installDir, "node_modules", "agentd");
    expect(findContract(from)).toBe(path.join(packageDir, "openapi.yaml"));
    expect(findMigrations(from)).toBe(path.join(packageDir, "server", "db", "migrations"));
  });

  // Every build of a release has one package version: the commit it was
  // built from tells two apart, as SemVer build metadata.
  it("both commands print the package's version with the commit it was built from, and the server's banner shows it", async () => {
    const { version } = JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { version: string };
    const head = (await runOk("git", ["rev-parse", "--short=12", "HEAD"], { cwd: repoRoot })).trim();
    const built = new RegExp(`^${version.replaceAll(".", "\\.")}\\+${head}(\\.dirty)?\n$`);
    const shown: string[] = [];
    for (const command of ["agentd", "agentctl"]) {
      // npx takes --version and -V for its own (npm's version) unless `--` ends its options first.
      const printed = await runOk("npx", ["--no", "--", command, "--version"], { cwd: installDir, env: npmEnv() });
      expect(printed, command).toMatch(built);
      shown.push(printed);
    }
    expect(banner).toContain(`  version:     ${shown[0]}`);
  });

  it("serves the API and validates requests against the packaged contract", async () => {
    const { url, certPath, token } = served();
    const dispatcher = new Agent({ connect: { ca: readFileSync(certPath, "utf8") } });
    try {
      const list = await callHttps(dispatcher, "GET", `${url}/agents`, { token });
      expect(list.status).toBe(200);
      const invalid = await callHttps(dispatcher, "GET", `${url}/agents/by-id/abc`, { token });
      expect(invalid.status).toBe(400);
      expect(invalid.json).toMatchObject({ error: "invalid request" });
      // The bundle's ajv is the patched one: an id that overflows is refused, not looked up.
      const overflowing = await callHttps(dispatcher, "GET", `${url}/agents/by-id/${"9".repeat(309)}`, { token });
      expect(overflowing.status).toBe(400);
    } finally {
      await dispatcher.destroy();
    }
  });

  it("the typed client imports from the installed package (agentd/client) and lists the agents", async () => {
    const { url, certPath, token } = served();
    const script = [
      'import { createAgentdClient } from "agentd/client";',
      "const client = createAgentdClient({ baseUrl: process.env.URL, token: process.env.TOKEN, ca: process.env.CA });",
      "const result = await client.listAgents();",
      "await client.close();",
      "process.stdout.write(JSON.stringify(result));",
    ].join("\n");
    const out = await runOk(process.execPath, ["--input-type=module", "-e", script], { cwd: installDir, env: { ...npmEnv(), URL: url, TOKEN: token, CA: certPath } });
    const result = JSON.parse(out) as { ok: boolean; data: { number: string }[] };
    expect(result.ok).toBe(true);
    expect(result.data.map((agent) => agent.number)).toContain("1001");
  });

  it("npx agentctl agents list works against it, and so does a token made by npx agentd token create", async () => {
    const { token } = served();
    const table = await runOk("npx", ["--no", "agentctl", "agents", "list"], { cwd: installDir, env: agentctlEnv(token) });
    expect(table).toMatch(/^ID\s+NUMBER/);
    expect(table).toContain("1001");

    const reader = (
      await runOk("npx", ["--no", "agentd", "token", "create", "--acl", "agentd.agents.read"], {
        cwd: installDir,
        env: { ...npmEnv(), AGENTD_DATA_DIR: path.join(work, "data"), AGENTD_LOG_LEVEL: "warn" },
      })
    ).trim();
    const json = await runOk("npx", ["--no", "agentctl", "agents", "list", "--json"], { cwd: installDir, env: agentctlEnv(reader) });
    expect((JSON.parse(json) as { number: string }[]).map((agent) => agent.number)).toContain("1001");
  });

  // Last: these take the data-directory lock's native addon away from the
  // installed package, as on a platform it has no build for (musl, as on
  // Alpine). The server above loaded it long before.
  describe("where the lock's native addon does not load", () => {
    beforeAll(async () => {
      await rm(path.join(installDir, "node_modules", "fs-native-extensions", "prebuilds"), { recursive: true, force: true });
    });

    it("the embedded database refuses to start, saying why and what to use instead", async () => {
      const result = await run("npx", ["--no", "agentd", "token", "create", "--acl", "agentd.#"], {
        cwd: installDir,
        env: { ...npmEnv(), AGENTD_DATA_DIR: path.join(work, "data-no-addon"), AGENTD_LOG_LEVEL: "warn" },
        timeoutMs: 60_000,
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`agentd: cannot lock the data directory ${path.join(work, "data-no-addon")}: its native addon (fs-native-extensions) does not load on this platform (${process.platform}-${process.arch})`);
      expect(result.stderr).toContain("use PostgreSQL (AGENTD_DATABASE_URL)");
      // One line, not the addon loader's list of every file it tried.
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
    });

    it.skipIf(postgresTestUrl() === undefined)("PostgreSQL needs no lock: the same package works on it", async () => {
      const database = await freshPostgres();
      try {
        const out = await runOk("npx", ["--no", "agentd", "token", "create", "--acl", "agentd.agents.read"], {
          cwd: installDir,
          env: { ...npmEnv(), AGENTD_DATABASE_URL: database.location, AGENTD_LOG_LEVEL: "warn" },
        });
        expect(out.trim()).toMatch(/^\S{20,}$/);
      } finally {
        await database.cleanup();
      }
    });
  });
});

describe("npm ci --omit=dev in a development clone, the way many Node services are deployed", () => {
  it("fails at once, pointing to npm ci for a clone and to the release package for a deployment", async () => {
    // What prepare needs of a clone: the manifest, the lock file and the script it runs first.
    const clone = await mkdtemp(path.join(os.tmpdir(), "agentd-omit-dev-"));
    try {
      for (const file of ["package.json", "package-lock.json", "scripts/check-dev-install.js"]) {
        await mkdir(path.dirname(path.join(clone, file)), { recursive: true });
        await writeFile(path.join(clone, file), readFileSync(path.join(repoRoot, file)));
      }
      const result = await run("npm", ["ci", "--omit=dev", "--prefer-offline", "--no-audit", "--no-fund"], { cwd: clone, env: npmEnv(), timeoutMs: 120_000 });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain("installed without its dev dependencies (--omit=dev, or NODE_ENV=production)");
      expect(result.stderr).toContain("npm ci && npm start");
      expect(result.stderr).toContain("npm install --omit=dev ./agentd-<version>.tgz");
      expect(result.stderr).not.toContain("not found");
    } finally {
      await rm(clone, { recursive: true, force: true });
    }
  }, 150_000);
});
