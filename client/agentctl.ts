#!/usr/bin/env node
// The agentctl bin. All logic lives in ./cli.js.
import { runAgentctl } from "./cli.js";

process.exitCode = await runAgentctl(process.argv.slice(2));
