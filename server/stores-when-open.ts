// The app's stores while the database is still opening. The server builds its
// app and warms the validator up (http/warm-up.ts) meanwhile, on this thread,
// while the database opens on its own (db/threaded-pglite.ts). Warm-up
// requests stop before the handlers and the token check, so only clients
// call these, once the port has opened, and by then the stores are open:
// each call costs one more await of a settled promise.
import { EmbeddedVerifier } from "./auth/embedded.js";
import type { TokenVerifier } from "./auth/verifier.js";
import type { AgentOperations } from "./store/agent-store.js";
import type { Stores } from "./stores.js";

/** What the handlers do with the agent store of `stores`, once they have opened. */
export function agentStoreWhenOpen(stores: Promise<Stores>): AgentOperations {
  return {
    list: async () => (await stores).store.list(),
    getById: async (id) => (await stores).store.getById(id),
    getByNumber: async (number) => (await stores).store.getByNumber(number),
    pause: async (number, reason) => (await stores).store.pause(number, reason),
    unpause: async (number) => (await stores).store.unpause(number),
  };
}

/** The embedded token check over the token store of `stores`, once they have opened. */
export function embeddedVerifierWhenOpen(stores: Promise<Stores>): TokenVerifier {
  let verifier: EmbeddedVerifier | undefined;
  return {
    verify: async (token, acl) => (verifier ??= new EmbeddedVerifier((await stores).tokens)).verify(token, acl),
  };
}
