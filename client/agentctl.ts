#!/usr/bin/env node
// The agentctl bin. All logic lives in ./cli.js.
import { onOutputError, runAgentctl } from "./cli.js";

process.stdout.on("error", onOutputError);
process.exitCode = await runAgentctl(process.argv.slice(2));
