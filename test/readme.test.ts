// The README is the operator's door: every variable the server reads is
// documented there with its default, and its shell blocks (and those of
// the other Markdown files) paste into any shell as they are.
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../devkit/root.js";
import { shownDefault } from "../server/config/env-docs.js";
import { VARIABLE_LIST } from "../server/config/variables.js";
import { AGENTCTL_VARIABLES } from "../server/config/load.js";

const readme = readFileSync(path.join(repoRoot, "README.md"), "utf8");

/** The project's Markdown files, as git tracks them. */
function markdownFiles(): string[] {
  return execFileSync("git", ["ls-files", "-z", "--", "*.md"], { cwd: repoRoot, encoding: "utf8" })
    .split("\0")
    .filter((name) => name !== "")
    .map((name) => path.join(repoRoot, name));
}

/** Each line of the file's fenced sh, bash, shell and zsh blocks, with its line number. */
function shellLines(text: string): { line: number; text: string }[] {
  const lines: { line: number; text: string }[] = [];
  let inShell: boolean | null = null;
  for (const [index, line] of text.split("\n").entries()) {
    const fence = /^\s*```(\S*)/.exec(line);
    if (fence) inShell = inShell === null ? ["sh", "bash", "shell", "zsh"].includes(fence[1] ?? "") : null;
    else if (inShell) lines.push({ line: index + 1, text: line });
  }
  return lines;
}

/** Where a shell would start a comment on this line: a `#` beginning a word outside quotes; -1 when none. */
function commentAt(line: string): number {
  let quote: string | null = null;
  let wordStart = true;
  for (let i = 0; i < line.length; i++) {
    const c = line.charAt(i);
    if (quote !== null) {
      if (c === quote) quote = null;
      else if (c === "\\" && quote === '"') i++;
      continue;
    }
    if (c === "#" && wordStart) return i;
    // After a blank or an operator (`a;#b`, `a&&#b`, `(#`), a `#` begins a word.
    wordStart = /[\s;&|()<>]/.test(c);
    if (c === "\\") i++;
    else if (c === "'" || c === '"') quote = c;
  }
  return -1;
}

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
    // Named by the server only to tell them from a misspelt variable of its own.
    expect([...used].filter((name) => !documented.has(name) && !AGENTCTL_VARIABLES.has(name))).toEqual([]);
    for (const name of AGENTCTL_VARIABLES) expect(readme).toContain(`\`${name}\``);
    expect([...documented].filter((name) => !used.has(name))).toEqual([]);
  });

  it("shows the two commands", () => {
    expect(readme).toContain("npm ci && npm start");
    expect(readme).toContain("npm ci && npm test");
  });

  // An interactive zsh (macOS's default shell) without `interactivecomments`
  // passes a `# comment` on as arguments: `npm test # run the suites` would
  // run vitest with "#", "run", … as filters. So the blocks hold commands
  // only, and what they do is said in the prose around them.
  it("has shell blocks without comments, in every Markdown file", () => {
    const found = markdownFiles().flatMap((file) =>
      shellLines(readFileSync(file, "utf8"))
        .filter(({ text }) => commentAt(text) >= 0)
        .map(({ line, text }) => `${path.relative(repoRoot, file)}:${line}: ${text.trim()}`),
    );
    expect(found).toEqual([]);
  });

  // Found by a walk through the README: a usage line (`[--agents N]`) and a
  // placeholder (`--id <id>`) in shell blocks, which stop a pasted block:
  // `<id>` is a redirection, `[--agents` a bad glob in zsh.
  it("has shell blocks that bash and zsh parse, with no usage placeholders, in every Markdown file", () => {
    const found: string[] = [];
    for (const file of markdownFiles()) {
      const where = path.relative(repoRoot, file);
      const blocks: { line: number; text: string }[][] = [];
      for (const line of shellLines(readFileSync(file, "utf8"))) {
        const block = blocks.at(-1);
        if (block !== undefined && block.at(-1)!.line === line.line - 1) block.push(line);
        else blocks.push([line]);
      }
      for (const block of blocks) {
        for (const { line, text } of block) if (/(^|\s)<[A-Za-z][\w.-]*>|\[--/.test(text)) found.push(`${where}:${line}: placeholder: ${text.trim()}`);
        const script = block.map(({ text }) => text).join("\n") + "\n";
        for (const shell of ["bash", "zsh"]) {
          try {
            execFileSync(shell, ["-n"], { input: script, stdio: ["pipe", "ignore", "pipe"] });
          } catch (error) {
            // Installed by .ci/run, as test/samples.test.ts needs it too.
            if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new Error(`${shell} is not installed (apt-get install ${shell}): this test checks that the blocks paste into it`, { cause: error });
            found.push(`${where}:${block[0]!.line}: ${shell} -n: ${String((error as { stderr?: unknown }).stderr).trim()}`);
          }
        }
      }
    }
    expect(found).toEqual([]);
  });

  it("finds a comment only where a shell would", () => {
    expect(commentAt("npm test # run them")).toBe(9);
    expect(commentAt("# alone")).toBe(0);
    expect(commentAt("npx agentd token create --acl 'agentd.#'")).toBe(-1);
    expect(commentAt('echo "a # b" c')).toBe(-1);
    expect(commentAt("echo a\\ #b")).toBe(-1);
    expect(commentAt("curl https://x.example/#section")).toBe(-1);
    expect(commentAt("npm test;#x")).toBe(9);
    expect(commentAt("a && (#x)")).toBe(6);
    expect(shellLines("```sh\nnpm test # x\n```\n```text\nnot # shell\n```\n  ```bash\n  a # b\n  ```")).toEqual([
      { line: 2, text: "npm test # x" },
      { line: 8, text: "  a # b" },
    ]);
  });
});
