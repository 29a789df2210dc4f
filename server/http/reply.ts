import type { Response } from "express";
import type { operations } from "../../generated/openapi.js";
import type { OperationId } from "../../generated/operations.js";

type Responses<O extends OperationId> = operations[O]["responses"];
type JsonBody<R> = R extends { content: { "application/json": infer B } } ? B : never;

/**
 * Serialised bodies, by object. The stores hand out the same immutable
 * objects until the data changes (then new ones), so each agent and each
 * list is serialised once, not on every request. Kept as bytes: a string
 * would be encoded again for every response, and a large list runs to
 * megabytes.
 */
const serialised = new WeakMap<object, Buffer>();

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
    let bytes = serialised.get(payload);
    if (bytes === undefined) {
      bytes = Buffer.from(JSON.stringify(payload), "utf8");
      serialised.set(payload, bytes);
    }
    // The header res.json would send.
    res.set("Content-Type", "application/json; charset=utf-8").send(bytes);
  }
}
