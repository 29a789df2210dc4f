import { getSystemErrorMap, inspect } from "node:util";

/**
 * A step that failed on a file or folder (the data directory, the embedded
 * database's files, a socket) or on a network address (a listener): its
 * message says what could not be done, where, and the system's reason, e.g.
 * `cannot open the data directory /srv/agentd: EACCES: permission denied`.
 */
export class PathFailure extends Error {
  override readonly name = "PathFailure";

  constructor(what: string, where: string, cause: unknown) {
    super(`cannot ${what} ${where}: ${systemReason(cause, where)}`, { cause });
  }
}

/**
 * What a thrown value says, readable whatever was thrown: an Error's
 * message (with the path a system error names, when the message leaves it
 * out), or for anything else (a library may throw a plain object) the
 * system's reason or an inspection of the value, never `[object Object]`.
 */
export function describeFailure(err: unknown): string {
  if (err instanceof Error) {
    const where = pathOf(err);
    return where !== undefined && !err.message.includes(where) ? `${err.message} (${where})` : err.message;
  }
  return systemReason(err);
}

/**
 * The system's reason for a failure: `CODE: description` for a system error
 * (Node's own description, without its syscall and path, which the caller
 * names), with the path it failed on when that is not `where` itself.
 */
function systemReason(err: unknown, where?: string): string {
  const code = codeOf(err);
  if (code === undefined) {
    if (err instanceof Error) return err.message;
    return typeof err === "string" ? err : inspect(err, { depth: 2, breakLength: Infinity });
  }
  const path = pathOf(err);
  const beside = path !== undefined && path !== where ? ` (${path})` : "";
  const description = systemDescription(code);
  // A code libuv does not describe (getaddrinfo's ENOTFOUND) is already in Node's message.
  if (description === undefined && err instanceof Error && err.message.includes(code)) return `${err.message}${beside}`;
  return `${code}: ${description ?? (err as Error).message}${beside}`;
}

/** A system error's code (`ENOENT`, `EACCES`…), undefined for any other thrown value. */
export function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^E[A-Z0-9]+$/.test(code) ? code : undefined;
}

function pathOf(err: unknown): string | undefined {
  const path = (err as { path?: unknown } | null)?.path;
  return typeof path === "string" ? path : undefined;
}

/** Node's description of an error code (`EACCES` → `permission denied`), from libuv's table. */
export function systemDescription(code: string): string | undefined {
  for (const [name, description] of getSystemErrorMap().values()) if (name === code) return description;
  return undefined;
}
