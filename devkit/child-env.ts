// The environment a child agentd (or agentd CLI) starts with: this process's
// own, minus every AGENTD_* variable, so a developer's or CI's settings never
// configure a server under test or under load. Shared by the tests
// (test/helpers/process.ts) and the bench (bench/systems-under-test.ts), so it lives in devkit/.

/** This process's environment without its AGENTD_* variables; the caller adds the ones it means. */
export function envWithoutAgentd(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith("AGENTD_")) env[name] = value;
  }
  return env;
}
