// The variables of variables.ts as people read them: `.env.example` and the
// `agentd serve --help` section (the README's table is checked against the
// same list by test/readme.test.ts).
import { VARIABLE_LIST, type Variable } from "./variables.js";

/** The default as the README, --help and .env.example show it. */
export function shownDefault(v: Variable<unknown>): string | null {
  return v.shownDefault ?? v.default;
}

/** `.env.example`: every variable, commented out at its default, with its description. */
export function renderEnvExample(): string {
  const blocks = VARIABLE_LIST.map((v) => {
    const shown = shownDefault(v);
    const note = v.default === null && shown !== null ? ` (default: ${shown})` : "";
    return `# ${v.description}${note}\n# ${v.name}=${v.default ?? ""}\n`;
  });
  return (
    "# agentd configuration: copy to .env and uncomment what you change.\n" +
    "# Generated from server/config/variables.ts by `npm run generate`; do not edit by hand.\n\n" +
    blocks.join("\n")
  );
}

/** The `agentd serve --help` section listing every variable. */
export function renderEnvHelp(): string {
  const lines = VARIABLE_LIST.map((v) => {
    const shown = shownDefault(v);
    return `  ${v.name}${shown === null ? "" : ` (default: ${shown})`}\n      ${v.description}`;
  });
  return `Environment variables (also read from ./.env):\n${lines.join("\n")}\n`;
}
