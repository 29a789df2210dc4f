// Code lint: typescript-eslint's type-aware recommended rules over every
// TypeScript file of the repository and the Redocly plugin's JavaScript
// (plugins/, typed by JSDoc and type-checked through tsconfig.json).
// `npm run lint` runs it after the contract lint; `npm run check` (which CI
// runs, .ci/run) runs `npm run lint`. No test runs it.
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "docs/", "generated/", "artifacts/", "releases/", "data/"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // A leading underscore marks a parameter a signature requires but the body does not use (Express's `next`).
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
    },
  },
  {
    // Tests read HTTP answers and parsed YAML as loose JSON on purpose: their
    // shape is asserted at run time against the contract (Ajv), which a static
    // type could only restate.
    files: ["test/**/*.ts"],
    rules: {
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-return": "off",
    },
  },
  {
    // The one JavaScript file outside the TypeScript project (tsconfig.json):
    // linted without types.
    files: ["eslint.config.js"],
    ...tseslint.configs.disableTypeChecked,
  },
);
