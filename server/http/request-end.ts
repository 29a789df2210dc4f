import type { ServerResponse } from "node:http";

/**
 * Calls back once a request is over, saying whether its answer reached the
 * client. Told by the response's "finish" event, which fires only once the
 * answer was handed to the connection: `writableFinished` also reads true
 * for an answer written after the client left (the body parser's "request
 * aborted" 400, say), which then counted and logged as answered.
 */
export function onRequestEnd(res: ServerResponse, then: (answered: boolean) => void): void {
  let answered = false;
  res.once("finish", () => (answered = true));
  res.once("close", () => then(answered));
}
