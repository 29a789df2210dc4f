// Errors the client throws. API errors (any HTTP response that is not a
// success) are NOT thrown: they come back as `{ ok: false, status, error }`
// results, because they are part of the contract and callers branch on them.
// Only failures where no HTTP response exists are thrown.

/** Base class, so callers can catch every client-raised error at once. */
export class AgentdError extends Error {
  override name = "AgentdError";
}

/**
 * No HTTP response was obtained: connection refused, DNS failure, time-out,
 * TLS failure (e.g. a self-signed certificate that is not trusted). The
 * message names the URL and the cause.
 */
export class AgentdNetworkError extends AgentdError {
  override name = "AgentdNetworkError";
  /** The URL of the request that failed. */
  readonly url: string;
  /** The low-level code when one is known (ECONNREFUSED, DEPTH_ZERO_SELF_SIGNED_CERT, ...). */
  readonly code: string | undefined;

  constructor(url: string, cause: unknown) {
    const { code, message } = describeCause(cause);
    super(`cannot reach ${url}: ${code && !message.includes(code) ? `${code} ` : ""}${message}`, { cause });
    this.url = url;
    this.code = code;
  }
}

/** The client was configured with something unusable (e.g. an unreadable `ca` file). */
export class AgentdConfigError extends AgentdError {
  override name = "AgentdConfigError";
}

type ErrorLike = { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };

// fetch implementations wrap the interesting error: undici throws
// `TypeError("fetch failed")` whose `cause` is the socket or TLS error, and a
// connection to a host with several addresses fails with an AggregateError
// whose `errors` hold one error per address. Dig out the innermost useful one.
function describeCause(cause: unknown): { code: string | undefined; message: string } {
  let message = (cause instanceof Error ? cause.message : String(cause)).trim();
  let current: unknown = cause;
  for (let depth = 0; depth < 5; depth++) {
    if (typeof current !== "object" || current === null) break;
    const e = current as ErrorLike;
    // OpenSSL's messages end with a line break.
    if (typeof e.message === "string" && e.message.trim()) message = e.message.trim();
    if (typeof e.code === "string") return { code: e.code, message };
    if (e.cause !== undefined) {
      current = e.cause;
    } else if (Array.isArray(e.errors) && e.errors.length > 0) {
      current = e.errors[0];
    } else {
      break;
    }
  }
  return { code: undefined, message };
}
