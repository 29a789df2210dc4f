// devkit/: what the tests (test/) and the bench (bench/) share, and the
// project's dev tooling (scripts/) may use: never imported by product code
// (server/, client/), never built into dist/ (tsconfig.build.json leaves it
// out), and free of vitest, so the bench and scripts can run it with tsx.
//
// This file: the repository's root, found from devkit/'s own location, so a
// copy of the tooling (test/helpers/project-copy.ts) finds its own root.
import path from "node:path";

/** The repository root (the folder holding package.json and openapi.yaml). */
export const repoRoot = path.resolve(import.meta.dirname, "..");
