// The `agentd/extension-contract-changed` diff rule (`redocly diff`, run by
// npm run contract:gate): two extensions of the contract are promises a
// client relies on, and redocly diff, which knows nothing of extensions,
// rates every change to them as harmless.
// - `x-required-acl`, the ACL an operation's token needs: a changed or new
//   one refuses every token issued for the old one (403). One removed asks
//   less of a token, which breaks nobody.
// - `x-amqp`, where an event is published on the bus: a changed or removed
//   exchange or routing key leaves every consumer bound to the old one
//   without events. One added publishes a new event, which breaks nobody.

/** @param {unknown} value @returns {string} */
const shown = (value) => (value === undefined ? "(none)" : JSON.stringify(value));

export function ExtensionContractChanged() {
  return {
    /**
     * @param {{ kind: string, property?: string, base?: { value: unknown }, revision?: { value: unknown } }} change
     * @param {{ report: (problem: { message: string }) => void }} ctx
     */
    Operation(change, { report }) {
      if (change.kind !== "modified" || change.property !== "x-required-acl" || change.revision?.value === undefined) return;
      const acl = shown(change.revision.value);
      report({
        message:
          change.base?.value === undefined
            ? `The operation now requires the ACL ${acl}: a token without it is refused.`
            : `The required ACL changed from ${shown(change.base.value)} to ${acl}: tokens issued for the old one are refused.`,
      });
    },
    // An extension's own fields: `x-amqp`'s exchange, exchange type and routing key.
    /**
     * @param {{ kind: string, property?: string, node: { base?: { key: unknown }, revision?: { key: unknown } }, base?: { value: unknown }, revision?: { value: unknown } }} change
     * @param {{ report: (problem: { message: string }) => void }} ctx
     */
    SpecExtension(change, { report }) {
      if ((change.node.revision ?? change.node.base)?.key !== "x-amqp") return;
      if (change.kind === "removed") report({ message: "The event is no longer published on the bus: consumers bound to it receive nothing." });
      if (change.kind === "modified") {
        report({
          message: `Where the event is published on the bus changed (${String(change.property)} ${shown(change.base?.value)} → ${shown(change.revision?.value)}): consumers bound to the old one receive nothing.`,
        });
      }
    },
  };
}
