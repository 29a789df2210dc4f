// The README is the operator's door: every variable the server reads is
// documented there with its default.
import { readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../devkit/root.js";
import { shownDefault } from "../server/config/env-docs.js";
import { VARIABLE_LIST } from "../server/config/variables.js";

const readme = readFileSync(path.join(repoRoot, "README.md"), "utf8");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? sources(file) : file.endsWith(".ts") ? [file] : [];
  });
}

describe("README", () => {
  it.each(VARIABLE_LIST.map((v) => [v.name, v] as const))("documents %s with its default", (name, v) => {
    const row = readme.split("\n").find((line) => line.startsWith(`| \`${name}\` |`));
    expect(row, `no configuration row for ${name}`).toBeDefined();
    const shown = shownDefault(v);
    expect(row).toContain(shown === null ? "unset" : `\`${shown}\``);
  });

  it("documents every AGENTD_ variable the server code reads, and nothing it does not", () => {
    const used = new Set<string>();
    for (const file of sources(path.join(repoRoot, "server"))) {
      for (const match of readFileSync(file, "utf8").matchAll(/\bAGENTD_[A-Z_]+\b/g)) used.add(match[0]);
    }
    const documented = new Set<string>(VARIABLE_LIST.map((v) => v.name));
    expect([...used].filter((name) => !documented.has(name))).toEqual([]);
    expect([...documented].filter((name) => !used.has(name))).toEqual([]);
  });

  it("shows the two commands", () => {
    expect(readme).toContain("npm ci && npm start");
    expect(readme).toContain("npm ci && npm test");
  });
});
