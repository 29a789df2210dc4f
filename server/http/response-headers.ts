import type { RequestHandler } from "express";

/**
 * Headers on every API answer, errors included, defined once: the Express
 * app sets them first thing (apiHeaders), and the answers Node's own parser
 * makes before Express sees a request (parser-errors.ts) carry them too.
 * - Every answer is one client's view at one moment, and some name agents
 *   and pause reasons: no cache, shared or private, may keep one.
 * - A JSON answer is never to be read as anything else (an error body
 *   echoing input included).
 * - Nothing in an answer is a page, a script or a frame to load.
 */
export const API_HEADERS: Readonly<Record<string, string>> = {
  "Cache-Control": "no-store",
  "X-Content-Type-Options": "nosniff",
  "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
};

/**
 * The service is HTTPS only: a browser that reached it once never tries
 * plain HTTP for its host again (a year, as is usual). Sent only with the
 * deployment's own certificate (AGENTD_TLS_CERT). The certificate the
 * server generates is for development on one machine, whose host is
 * `localhost`: a browser that trusted it would then refuse plain HTTP to
 * every port of localhost, the front end's own dev server included.
 */
export const HSTS: Readonly<Record<string, string>> = { "Strict-Transport-Security": "max-age=31536000" };

/** The headers of every answer of a server with this configuration. */
export function responseHeaders(config: { tlsCert: string | null }): Readonly<Record<string, string>> {
  return config.tlsCert === null ? API_HEADERS : { ...API_HEADERS, ...HSTS };
}

/**
 * The challenge a 401 must carry (RFC 9110): the token goes in the
 * X-Auth-Token header, which is also the name of the scheme here.
 */
export const TOKEN_CHALLENGE = { "WWW-Authenticate": 'X-Auth-Token realm="agentd"' } as const;

export function apiHeaders(headers: Readonly<Record<string, string>>): RequestHandler {
  return (_req, res, next) => {
    res.set(headers);
    next();
  };
}
