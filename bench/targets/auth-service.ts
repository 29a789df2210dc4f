// A wazo-auth compatible token check for the external-verifier target: the
// same small service the tests use (devkit/auth-service.ts), knowing
// only the bench token.
import { BENCH_TOKEN } from "../fixtures.js";
import { AuthService } from "../../devkit/auth-service.js";

const service = new AuthService(new Map([[BENCH_TOKEN, ["agentd.#"]]]));
await service.start(Number(process.env.BENCH_PORT));
process.on("SIGTERM", () => {
  // Checks answered: shows the verifier's cache stayed warm.
  process.stdout.write(JSON.stringify({ checks: service.requests.length }) + "\n");
  void service.stop().then(() => process.exit(0));
});
