// Node-only: a fetch that trusts one extra CA certificate for this client
// only. Loaded by client/index.ts through a dynamic import, and only when the
// `ca` option is given, so the browser path never pulls in undici or node:fs.
//
// Certificate checks stay on: the CA is added to what this dispatcher trusts
// (it does not replace hostname or expiry checks) and nothing global changes
// (no NODE_TLS_REJECT_UNAUTHORIZED, no global dispatcher).
import { X509Certificate } from "node:crypto";
import { readFile } from "node:fs/promises";
import { Agent, fetch as undiciFetch } from "undici";
import { AgentdConfigError } from "./errors.js";

/**
 * The PEM text of `ca`: the string itself when it holds PEM armour, else
 * the file it names. Either must hold a certificate that parses: a `ca`
 * without one would be ignored by TLS, and the user would see the server's
 * certificate refused instead of being told the file is wrong.
 */
async function loadCa(ca: string): Promise<string> {
  const inline = ca.includes("-----BEGIN");
  let pem = ca;
  if (!inline) {
    try {
      pem = await readFile(ca, "utf8");
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      throw new AgentdConfigError(`cannot read CA certificate file ${ca}: ${reason}`, { cause: err });
    }
  }
  const source = inline ? "the `ca` option" : `CA certificate file ${ca}`;
  if (!pem.includes("-----BEGIN CERTIFICATE-----")) {
    throw new AgentdConfigError(`${source} holds no PEM certificate (no -----BEGIN CERTIFICATE----- line)`);
  }
  try {
    new X509Certificate(pem);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new AgentdConfigError(`${source} holds a PEM certificate that cannot be read: ${reason}`, { cause: err });
  }
  return pem;
}

export type TrustingFetch = ((request: Request) => Promise<Response>) & {
  /** Closes the dispatcher's keep-alive connections. */
  close(): Promise<void>;
};

export async function createTrustingFetch(ca: string): Promise<TrustingFetch> {
  const pem = await loadCa(ca);
  const dispatcher = new Agent({ connect: { ca: pem } });
  // openapi-fetch builds a global Request; undici's own fetch only accepts
  // its own Request class, so pass the parts across. Bodies here are small
  // JSON documents, so buffering them is fine.
  const trustingFetch = async (request: Request): Promise<Response> => {
    const hasBody = request.method !== "GET" && request.method !== "HEAD";
    const headers: [string, string][] = [];
    request.headers.forEach((value, name) => headers.push([name, value]));
    const response = await undiciFetch(request.url, {
      method: request.method,
      headers,
      body: hasBody ? await request.arrayBuffer() : undefined,
      redirect: request.redirect,
      signal: request.signal,
      dispatcher,
    });
    return response as unknown as Response;
  };
  return Object.assign(trustingFetch, { close: () => dispatcher.close() });
}
