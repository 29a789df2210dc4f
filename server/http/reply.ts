import type { Response } from "express";
import type { operations } from "../../generated/openapi.js";

type OperationId = keyof operations;
type Responses<O extends OperationId> = operations[O]["responses"];
type JsonBody<R> = R extends { content: { "application/json": infer B } } ? B : never;

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
  if (body.length === 0) {
    res.end();
  } else {
    res.json(body[0]);
  }
}
