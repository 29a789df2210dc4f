import type { Response } from "express";
import type { operations } from "../../generated/openapi.js";
import type { OperationId } from "../../generated/operations.js";

type Responses<O extends OperationId> = operations[O]["responses"];
type JsonBody<R> = R extends { content: { "application/json": infer B } } ? B : never;

/**
 * Serialised bodies, by object. The embedded store hands out the same
 * immutable objects until the data changes (then new ones), so each agent
 * and each list is serialised once, not on every request.
 */
const serialised = new WeakMap<object, string>();

/**
 * Sends a response the contract allows for this operation and status, and
 * nothing else: a body of the wrong shape, or a status the operation does not
 * document, fails to compile.
 */
export function reply<O extends OperationId, S extends keyof Responses<O> & number>(
  res: Response,
  _operation: O,
  status: S,
  ...body: JsonBody<Responses<O>[S]> extends never ? [] : [JsonBody<Responses<O>[S]>]
): void {
  res.status(status);
  const payload = body[0];
  if (payload === undefined) {
    res.end();
  } else if (res.app.locals.validateResponses || typeof payload !== "object" || payload === null) {
    // express-openapi-validator checks responses inside res.json: keep it in the path.
    res.json(payload);
  } else {
    let text = serialised.get(payload);
    if (text === undefined) {
      text = JSON.stringify(payload);
      serialised.set(payload, text);
    }
    res.type("application/json").send(text);
  }
}
