// The project's Redocly plugin (`plugins:` in redocly.yaml): the release
// views of the contract and the rules that keep its version history sound.
import { CodeSamples } from "./code-samples.js";
import { ExtensionContractChanged } from "./extension-contract-changed.js";
import { ProseFree } from "./prose-free.js";
import { ReleaseLinks } from "./release-links.js";
import { ReleaseMarkers } from "./release-markers.js";
import { ReleaseView } from "./release-view.js";
import { ResponseEnumValuesRemoved } from "./response-enum-values-removed.js";
import { WebhookParameterChanged } from "./webhook-parameter-changed.js";

export default function agentdPlugin() {
  return {
    id: "agentd",
    decorators: {
      oas3: {
        "release-view": ReleaseView,
        // Redocly runs decorators in this order, whatever redocly.yaml's:
        // the front page reads the samples and the receivers, then the
        // releases and the changelog, the longest.
        "code-samples": CodeSamples,
        "release-links": ReleaseLinks,
        "prose-free": ProseFree,
      },
    },
    rules: {
      oas3: {
        "release-markers": ReleaseMarkers,
      },
    },
    // What `redocly diff` misses (npm run contract:gate).
    diff: {
      oas3: {
        "response-enum-values-removed": ResponseEnumValuesRemoved,
        "extension-contract-changed": ExtensionContractChanged,
        "webhook-parameter-changed": WebhookParameterChanged,
      },
    },
  };
}
