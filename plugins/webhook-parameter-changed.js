// The `agentd/webhook-parameter-changed` diff rule (`redocly diff`, run by
// npm run contract:gate): a webhook's parameters (its headers, such as
// `webhook-signature`) are sent by the service and read by the receiver,
// which is the client of a webhook. Redocly's parameter rules look only at
// what a client sends (the request direction), so a header the service
// stops sending, renames or may now leave out passes as harmless, though
// every receiver that reads it (a signature check, say) then fails. Redocly
// marks a webhook's parameters as the response direction: they are judged
// here as a response's fields are. A new header breaks nobody.

/**
 * The parameter a diff tree node holds, through a `$ref` (Redocly's tree
 * keeps the reference as the node's value, and what it points to beside it).
 * @param {{ value?: unknown, resolved?: { value?: unknown } } | undefined} node
 * @returns {{ name?: unknown, in?: unknown }}
 */
const parameterOf = (node) => /** @type {{ name?: unknown, in?: unknown }} */ ((node?.resolved ?? node)?.value ?? {});

/** @param {{ name?: unknown, in?: unknown }} parameter */
const named = (parameter) => `\`${String(parameter.name)}\` ${String(parameter.in)} parameter`;

export function WebhookParameterChanged() {
  return {
    /**
     * @param {{ kind: string, property?: string, node: { base?: { value?: unknown, resolved?: { value?: unknown } } }, base?: { value: unknown }, revision?: { value: unknown } }} change
     * @param {{ report: (problem: { message: string }) => void, getDirections: () => string[] }} ctx
     */
    Parameter(change, { report, getDirections }) {
      if (!getDirections().includes("response")) return;
      if (change.kind === "removed") {
        // The removed parameter itself, resolved by Redocly.
        const removed = /** @type {{ name?: unknown, in?: unknown }} */ (change.base?.value ?? {});
        report({ message: `The service no longer sends the ${named(removed)}: receivers that read it fail.` });
        return;
      }
      if (change.kind !== "modified") return;
      const base = parameterOf(change.node.base);
      const before = change.base?.value;
      const after = change.revision?.value;
      // Header names are case-insensitive: a change of case is no change.
      const sameHeader = base.in === "header" && String(before).toLowerCase() === String(after).toLowerCase();
      if (change.property === "name" && !sameHeader) {
        report({ message: `The ${named(base)} the service sends was renamed to \`${String(after)}\`: receivers that read it fail.` });
      }
      if (change.property === "in") {
        report({ message: `The ${named(base)} the service sends is now a ${String(after)} parameter: receivers that read it fail.` });
      }
      if (change.property === "required" && before === true && after !== true) {
        report({ message: `The ${named(base)} is no longer always sent: receivers that rely on it fail when it is missing.` });
      }
    },
    /**
     * @param {{ kind: string }} change
     * @param {{ report: (problem: { message: string }) => void, getDirections: () => string[] }} ctx
     */
    ParameterList(change, { report, getDirections }) {
      if (change.kind === "removed" && getDirections().includes("response")) {
        report({ message: "The service no longer sends any of the webhook's parameters: receivers that read them fail." });
      }
    },
  };
}
