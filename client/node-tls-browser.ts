// The browser's stand-in for ./node-tls.js. package.json's `browser` field
// maps node-tls.js to this file, so a bundler building a web app (Vite,
// esbuild, webpack) never follows client/index.ts's on-demand import of
// node-tls.js into undici and node:fs, which no browser has. Node ignores the
// `browser` field and loads node-tls.js.
//
// In a browser, the browser's own trust store decides which certificates are
// trusted: the `ca` option has no meaning there, and says so on first use.
import { AgentdConfigError } from "./errors.js";
import type { TrustingFetch } from "./node-tls.js";

export function createTrustingFetch(_ca: string): Promise<TrustingFetch> {
  return Promise.reject(
    new AgentdConfigError("the `ca` option works in Node only: in a browser, the browser's own trust store decides which certificates are trusted"),
  );
}
