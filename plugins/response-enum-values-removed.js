// The `agentd/response-enum-values-removed` diff rule (`redocly diff`, run by
// npm run contract:gate): an enum of a response losing a value. Redocly's own
// enum-values-removed only looks at requests, where a lost value refuses what
// a client sends. In a response it is a state the server no longer reports,
// which a client waiting for it (a screen showing paused agents, say) never
// sees again: as breaking as a removed property.

/** @param {unknown} values @param {unknown} from @returns {unknown[]} */
const missing = (values, from) => (Array.isArray(values) ? values.filter((value) => !(Array.isArray(from) && from.includes(value))) : []);

export function ResponseEnumValuesRemoved() {
  return {
    /**
     * @param {{ kind: string, property?: string, base: { value: unknown }, revision: { value: unknown } }} change
     * @param {{ report: (problem: { message: string }) => void, getDirections: () => string[] }} ctx
     */
    Schema(change, { report, getDirections }) {
      if (change.kind !== "modified" || change.property !== "enum" || !getDirections().includes("response")) return;
      const lost = missing(change.base.value, change.revision.value);
      if (change.revision.value === undefined || lost.length === 0) return;
      report({ message: `A response enum lost values: ${lost.map((value) => `'${String(value)}'`).join(", ")}.` });
    },
  };
}
