#!/usr/bin/env node
// The agentctl bin. All logic lives in ./cli.js.
import { guardOutput, runAgentctl } from "./cli.js";

const output = guardOutput();
output.exit(await runAgentctl(process.argv.slice(2)));
