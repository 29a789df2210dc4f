// The parse of openapi.yaml that the bundles carry (scripts/bundle.ts
// defines it, server/contract.ts reads it): used only while openapi.yaml is
// the text it was parsed from. The module is bundled here with esbuild as
// bundle.ts does it, beside a copy of the contract; the carried document is
// marked, so the test sees which of the two readContract returns.
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot } from "../devkit/root.js";
import { buildContract, CONTRACT_PATH, readContract } from "../server/contract.js";

const dir = mkdtempSync(path.join(tmpdir(), "agentd-built-contract-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the contract a bundle carries", () => {
  it("is the document of the text it was parsed from, in JSON", () => {
    const text = readFileSync(CONTRACT_PATH, "utf8");
    const built = buildContract(text);
    expect(JSON.parse(built.json)).toEqual(readContract());
    expect(built.sha256).toBe(createHash("sha256").update(text).digest("hex"));
  });

  it("refuses a contract that JSON cannot carry as parsed", () => {
    // js-yaml reads an unquoted date as a Date, which JSON would turn into a string.
    expect(() => buildContract("openapi: 3.1.0\nx-released: 2026-11-26\n")).toThrow(/JSON does not keep/);
  });

  it("is used while openapi.yaml is unchanged, and a changed file is parsed as it is", async () => {
    const text = readFileSync(CONTRACT_PATH, "utf8");
    const contract = path.join(dir, "openapi.yaml");
    writeFileSync(contract, text);
    const built = buildContract(text);
    const marked = JSON.stringify({ ...(JSON.parse(built.json) as object), "x-parsed": "at build time" });
    const bundle = path.join(dir, "contract.mjs");
    await build({
      entryPoints: [path.join(repoRoot, "server", "contract.ts")],
      outfile: bundle,
      bundle: true,
      platform: "node",
      target: "node20",
      format: "esm",
      define: { BUILT_CONTRACT_SHA256: JSON.stringify(built.sha256), BUILT_CONTRACT_JSON: JSON.stringify(marked) },
      // Ajv's CommonJS needs require, as in bundle.ts.
      banner: { js: 'import { createRequire } from "node:module"; const require = createRequire(import.meta.url);' },
      logLevel: "warning",
    });
    const bundled = (await import(pathToFileURL(bundle).href)) as typeof import("../server/contract.js");

    // The bundle finds the copy beside it, and takes the carried parse for it.
    expect(bundled.CONTRACT_PATH).toBe(contract);
    expect(bundled.CONTRACT["x-parsed"]).toBe("at build time");

    writeFileSync(contract, `${text}x-changed: after the build\n`);
    const now = bundled.readContract(contract);
    expect(now["x-parsed"]).toBeUndefined();
    expect(now["x-changed"]).toBe("after the build");
    expect({ ...now, "x-changed": undefined }).toEqual({ ...readContract(), "x-changed": undefined });
  });
});
