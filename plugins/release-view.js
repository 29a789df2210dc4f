// The `agentd/release-view` decorator: the contract as one release saw it.
//
//   decorators:
//     agentd/release-view: { release: "15.18" }   # or `on`: the latest listed release
//
// openapi.yaml holds every release at once: an element a release introduced
// carries `x-since: "<release>"`, an element a release removed carries
// `x-until: "<release>"`. The view keeps what was there in the release and
// leaves everything that referred to the rest consistent:
//   - an element introduced later, or already removed, is dropped;
//   - a `$ref` to a dropped element is dropped with the entry that holds it
//     (the 401 response of every operation goes with components/responses/Unauthorized);
//   - a dropped property also leaves its schema's `required`;
//   - a dropped security scheme also leaves every security requirement
//     (an emptied requirement list means the release had no authentication,
//     and then its operations name no `x-required-acl` either);
//   - a oneOf or anyOf left with one schema becomes that schema;
//   - named examples lose the fields their schema lost, so they still validate;
//   - info.version becomes the release, info.x-releases and the history table
//     stop at it, and `x-until` markers go (a removal is the future for this view);
//   - a section of info.description whose heading is followed by the line
//     `<!-- x-since: "<release>" ... -->` goes too (the Authentication section
//     before 15.19), and so does, in any description, a paragraph that begins
//     with such a line (an operation's "Required ACL" before 15.19); the
//     marker lines go from every view;
//   - every operation shows the release that introduced it (an `x-badges` badge)
//     and every other element marked `x-since` says so in its description.
// Components left unused are dropped by Redocly's own remove-unused-components
// decorator, which runs after this one (configured next to it in redocly.yaml).
//
// This is the project's one walker of the contract's YAML: everything else
// bundles views with Redocly and compares what comes out.
import { compareReleases, isRelease, listedReleases, presentIn } from "./releases.js";

/** @typedef {Record<string, unknown>} Node */

/** @param {unknown} value @returns {value is Node} */
export const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);

/** A Markdown heading line; its `#`s are the first group. */
const HEADING = /^(#{1,6})\s/;

/**
 * Calls `visit` on every object under `node` (itself included), parents
 * before children, with its JSON pointer. Example payloads are data, not
 * contract elements: they are not entered.
 * @param {unknown} node
 * @param {string} pointer
 * @param {(node: Node, pointer: string) => void} visit
 */
function forEachElement(node, pointer, visit) {
  if (Array.isArray(node)) return node.forEach((item, index) => forEachElement(item, `${pointer}/${index}`, visit));
  if (!isObject(node)) return;
  visit(node, pointer);
  for (const [key, child] of Object.entries(node)) {
    if (key === "value" && pointer.startsWith("#/components/examples/")) continue;
    forEachElement(child, `${pointer}/${escape(key)}`, visit);
  }
}

/** @param {string} segment */
const escape = (segment) => segment.replace(/~/g, "~0").replace(/\//g, "~1");

/** @param {string} segment */
const unescape = (segment) => decodeURIComponent(segment).replace(/~1/g, "/").replace(/~0/g, "~");

/**
 * @param {{ release?: string }} [options]
 */
export function ReleaseView(options = {}) {
  return {
    Root: {
      // On enter, so every other decorator and Redocly's own passes see the view.
      /** @param {Node} root */
      enter(root) {
        const releases = listedReleases(root);
        const release = options.release ?? releases[releases.length - 1];
        if (!isRelease(release) || !releases.includes(release)) {
          throw new Error(`agentd/release-view: release ${JSON.stringify(release)} is not one of info.x-releases (${releases.join(", ")})`);
        }
        // A marker naming no listed release would silently drop its element
        // from every view (and the gate and the diff would not see it).
        const unlisted = unlistedMarkers(root, releases);
        if (unlisted.length > 0) {
          throw new Error(`agentd/release-view: markers that name no release of info.x-releases (${releases.join(", ")}): ${unlisted.join("; ")}`);
        }
        deriveView(root, release, releases);
      },
    },
  };
}

/**
 * Every `x-since` or `x-until` under `root` whose value is not one of
 * `releases`, and every marker line of a description that is wrong
 * (descriptionMarkerProblems), each as `pointer what`.
 * @param {Node} root
 * @param {string[]} releases
 * @returns {string[]}
 */
function unlistedMarkers(root, releases) {
  /** @type {string[]} */
  const found = [];
  forEachElement(root, "#", (node, pointer) => {
    for (const marker of ["x-since", "x-until"]) {
      const value = node[marker];
      if (marker in node && !(typeof value === "string" && releases.includes(value))) found.push(`${pointer} ${marker} ${JSON.stringify(value)}`);
    }
    if (typeof node.description === "string") found.push(...descriptionMarkerProblems(node.description, releases).map((problem) => `${pointer}/description ${problem}`));
  });
  return found;
}

/**
 * What is wrong with the marker lines of a description: one naming no
 * release of `releases`, or one that neither begins a paragraph nor follows
 * a heading (it would drop only the rest of its paragraph). Shared with the
 * lint rule (release-markers.js).
 * @param {string} description
 * @param {string[]} releases
 * @returns {string[]}
 */
export function descriptionMarkerProblems(description, releases) {
  const lines = description.split("\n");
  /** @type {string[]} */
  const problems = [];
  lines.forEach((line, index) => {
    const marker = SECTION_MARKER.exec(line);
    if (marker === null) {
      // Meant as a marker but not one (`x-since: 17.05` unquoted, an
      // `x-until`): kept as prose, it would show a later release's text in
      // every view.
      if (LOOKS_LIKE_MARKER.test(line)) problems.push(`${line.trim()} is not a marker: write <!-- x-since: "<release>" --> on a line of its own`);
      return;
    }
    const previous = lines[index - 1];
    if (!releases.includes(/** @type {string} */ (marker[1]))) problems.push(`${line.trim()} names no release of info.x-releases`);
    else if (previous !== undefined && previous.trim() !== "" && !HEADING.test(previous)) problems.push(`${line.trim()} must begin a paragraph (a blank line before it) or follow a heading`);
  });
  return problems;
}

/**
 * @param {Node} root
 * @param {string} release
 * @param {[string, ...string[]]} releases
 */
function deriveView(root, release, releases) {
  /** Pointers (`#/components/responses/Unauthorized`) of everything dropped. @type {Set<string>} */
  const dropped = new Set();
  /** For each schema that lost properties, their names. @type {Map<Node, Set<string>>} */
  const lostProperties = new Map();

  dropAbsent(root, "#", release, dropped, lostProperties);
  // An entry dropped for its reference may itself be referred to elsewhere:
  // repeat until nothing more goes.
  while (dropReferencesTo(root, "#", dropped, lostProperties) > 0);
  collapseChoices(root);
  dropUnknownSchemes(root, dropped);
  for (const [schema, names] of lostProperties) {
    const required = schema.required;
    if (!Array.isArray(required)) continue;
    const kept = required.filter((/** @type {string} */ name) => !names.has(name));
    if (kept.length === 0) delete schema.required;
    else schema.required = kept;
  }
  pruneExamples(root, lostProperties);
  markIntroductions(root, releases[0]);

  // An object: listedReleases read info.x-releases from it.
  const info = /** @type {Node} */ (root.info);
  info.version = release;
  info["x-releases"] = releases.filter((r) => compareReleases(r, release) <= 0);
  if (typeof info.description === "string") info.description = historyUpTo(info.description, release);
  descriptionsUpTo(root, release);
}

/**
 * Drops every element that is not part of `release` and the `x-until` markers
 * of the rest. Returns true when it left `node` empty (a map or list whose
 * every entry was dropped), for the caller to drop as well.
 * @param {unknown} node
 * @param {string} pointer
 * @param {string} release
 * @param {Set<string>} dropped
 * @param {Map<Node, Set<string>>} lostProperties
 * @returns {boolean}
 */
function dropAbsent(node, pointer, release, dropped, lostProperties) {
  let removedAny = false;
  if (Array.isArray(node)) {
    /** @type {unknown[]} */
    const kept = [];
    node.forEach((item, index) => {
      if (isObject(item) && !presentIn(item, release)) dropped.add(`${pointer}/${index}`);
      else kept.push(item);
    });
    removedAny = kept.length < node.length;
    node.splice(0, node.length, ...kept);
    node.forEach((item, index) => dropAbsent(item, `${pointer}/${index}`, release, dropped, lostProperties));
    return removedAny && node.length === 0;
  }
  if (!isObject(node)) return false;
  delete node["x-until"];
  for (const [key, child] of Object.entries(node)) {
    const at = `${pointer}/${escape(key)}`;
    if (key === "properties" && isObject(child)) {
      for (const [name, property] of Object.entries(child)) {
        if (isObject(property) && !presentIn(property, release)) {
          delete child[name];
          dropped.add(`${at}/${escape(name)}`);
          lose(lostProperties, node, name);
        }
      }
    } else if (isObject(child) && !presentIn(child, release)) {
      delete node[key];
      dropped.add(at);
      removedAny = true;
      continue;
    }
    if (dropAbsent(child, at, release, dropped, lostProperties)) {
      delete node[key];
      removedAny = true;
    }
  }
  return removedAny && Object.keys(node).length === 0;
}

/**
 * A oneOf or anyOf left with one schema becomes that schema: lint refuses a
 * one-branch oneOf, and a reader would see a choice of one. The branch's
 * keywords join its parent's, except its own release markers (the parent
 * was there before the branch was). A branch whose keywords clash with the
 * parent's stays as it is, for lint to refuse rather than a merge to change
 * what the schema accepts.
 * @param {unknown} node
 */
function collapseChoices(node) {
  if (Array.isArray(node)) return node.forEach(collapseChoices);
  if (!isObject(node)) return;
  for (const child of Object.values(node)) collapseChoices(child);
  for (const key of ["oneOf", "anyOf"]) {
    const choice = node[key];
    if (!Array.isArray(choice) || choice.length !== 1 || !isObject(choice[0])) continue;
    const branch = Object.entries(choice[0]).filter(([name]) => name !== "x-since" && name !== "x-until");
    if (branch.some(([name]) => name in node)) continue;
    delete node[key];
    for (const [name, value] of branch) node[name] = value;
  }
}

/**
 * Drops every entry holding a `$ref` to a dropped element, and any map or
 * list that leaves empty; returns how many entries it dropped.
 * @param {unknown} node
 * @param {string} pointer
 * @param {Set<string>} dropped
 * @param {Map<Node, Set<string>>} lostProperties
 * @returns {number}
 */
function dropReferencesTo(node, pointer, dropped, lostProperties) {
  let count = 0;
  /** @param {unknown} child */
  const refersToDropped = (child) => {
    const ref = isObject(child) ? child.$ref : undefined;
    return typeof ref === "string" && [...dropped].some((gone) => ref === gone || ref.startsWith(`${gone}/`));
  };
  /** @param {unknown} child */
  const isEmpty = (child) => (Array.isArray(child) ? child.length === 0 : isObject(child) && Object.keys(child).length === 0);
  if (Array.isArray(node)) {
    for (let index = node.length - 1; index >= 0; index--) {
      if (refersToDropped(node[index])) {
        dropped.add(`${pointer}/${index}`);
        node.splice(index, 1);
        count++;
      } else count += dropReferencesTo(node[index], `${pointer}/${index}`, dropped, lostProperties);
    }
    return count;
  }
  if (!isObject(node)) return 0;
  for (const [key, child] of Object.entries(node)) {
    const at = `${pointer}/${escape(key)}`;
    if (refersToDropped(child)) {
      delete node[key];
      dropped.add(at);
      count++;
      continue;
    }
    if (key === "properties" && isObject(child)) {
      for (const [name, property] of Object.entries(child)) {
        if (refersToDropped(property)) {
          delete child[name];
          dropped.add(`${at}/${escape(name)}`);
          lose(lostProperties, node, name);
          count++;
        } else count += dropReferencesTo(property, `${at}/${escape(name)}`, dropped, lostProperties);
      }
      continue;
    }
    const inside = dropReferencesTo(child, at, dropped, lostProperties);
    count += inside;
    if (inside > 0 && isEmpty(child)) {
      delete node[key];
      dropped.add(at);
    }
  }
  return count;
}

/**
 * A security requirement naming a dropped scheme did not exist in the release:
 * it goes, and so does a `security` list left empty (no authentication). An
 * operation that no requirement protects names no ACL either.
 * @param {Node} root
 * @param {Set<string>} dropped
 */
function dropUnknownSchemes(root, dropped) {
  /** @param {string} name */
  const isDropped = (name) => dropped.has(`#/components/securitySchemes/${escape(name)}`);
  /** @param {Node} owner */
  const fix = (owner) => {
    const security = owner.security;
    if (!Array.isArray(security)) return;
    const kept = security.filter((/** @type {Node} */ requirement) => !Object.keys(requirement).some(isDropped));
    if (kept.length === 0) delete owner.security;
    else owner.security = kept;
  };
  fix(root);
  for (const item of isObject(root.paths) ? Object.values(root.paths) : []) {
    for (const operation of isObject(item) ? Object.values(item) : []) {
      if (!isObject(operation)) continue;
      fix(operation);
      const security = operation.security ?? root.security;
      const protectedBy = Array.isArray(security) && security.length > 0 && security.every((/** @type {Node} */ r) => Object.keys(r).length > 0);
      if (!protectedBy) delete operation["x-required-acl"];
    }
  }
}

/**
 * Removes from every named example the fields its media type's schema lost.
 * @param {Node} root
 * @param {Map<Node, Set<string>>} lostProperties
 */
function pruneExamples(root, lostProperties) {
  if (lostProperties.size === 0) return;
  /** @param {unknown} node */
  const visit = (node) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!isObject(node)) return;
    if (isObject(node.schema) && (isObject(node.examples) || node.example !== undefined)) {
      for (const example of Object.values(node.examples ?? {})) {
        const resolved = deref(root, example);
        if (isObject(resolved) && "value" in resolved) prune(root, resolved.value, node.schema, lostProperties);
      }
      if (node.example !== undefined) prune(root, node.example, node.schema, lostProperties);
    }
    Object.values(node).forEach(visit);
  };
  visit(root.paths);
  visit(root.components);
}

/**
 * @param {Node} root
 * @param {unknown} value
 * @param {unknown} schemaNode
 * @param {Map<Node, Set<string>>} lostProperties
 */
function prune(root, value, schemaNode, lostProperties) {
  const schema = deref(root, schemaNode);
  if (!isObject(schema)) return;
  if (Array.isArray(value)) {
    for (const item of value) prune(root, item, schema.items, lostProperties);
  } else if (isObject(value)) {
    const lost = lostProperties.get(schema);
    for (const key of Object.keys(value)) {
      if (lost?.has(key)) delete value[key];
      else prune(root, value[key], isObject(schema.properties) ? schema.properties[key] : undefined, lostProperties);
    }
  }
}

/**
 * Operations, the webhooks' included, get a badge naming the release that
 * introduced them (their own `x-since`, else their path item's, else the
 * baseline); any other element marked `x-since` says it in its description.
 * @param {Node} root
 * @param {string} baseline
 */
function markIntroductions(root, baseline) {
  /** @type {Set<unknown>} */
  const operations = new Set();
  for (const group of [root.paths, root.webhooks]) {
    for (const item of Object.values(isObject(group) ? group : {})) {
      if (!isObject(item)) continue;
      for (const method of ["get", "put", "post", "delete", "patch", "head", "options", "trace"]) {
        const operation = item[method];
        if (!isObject(operation)) continue;
        const since = [operation["x-since"], item["x-since"]].find((value) => typeof value === "string") ?? baseline;
        operation["x-badges"] = [{ name: `Since ${since}` }];
        operations.add(operation);
      }
    }
  }
  forEachElement(root, "#", (node) => {
    const since = node["x-since"];
    if (!operations.has(node) && typeof since === "string") {
      const note = `Since release ${since}.`;
      // A description beside a `$ref` replaces the referenced one where it
      // is shown: the note goes after that text, not instead of it.
      const description = node.description ?? describedAt(root, node);
      // Once only: a frozen release, already a view, may be seen through it again (contract:diff --from <file>).
      if (typeof description !== "string") node.description = note;
      else if (!description.trimEnd().endsWith(note)) node.description = `${description.trimEnd()}\n\n${note}`;
    }
  });
}

/**
 * The description of the element `node`'s `$ref` names, following local
 * references (`#/...`) until one has a description. A reference to
 * another file is not followed (the contract is one file): such an element
 * gets the note alone.
 * @param {Node} root
 * @param {Node} node
 * @returns {unknown}
 */
function describedAt(root, node) {
  /** @type {unknown} */
  let target = node;
  for (let hops = 0; hops < 10 && isObject(target) && target.description === undefined; hops++) {
    const ref = target.$ref;
    if (typeof ref !== "string" || !ref.startsWith("#/")) return undefined;
    target = root;
    for (const segment of ref.slice(2).split("/")) {
      let name;
      try {
        name = unescape(segment);
      } catch {
        return undefined; // not a pointer this view can follow
      }
      target = isObject(target) ? target[name] : undefined;
    }
  }
  return isObject(target) ? target.description : undefined;
}

/**
 * Keeps the rows of the `| Release | Change |` table up to `release`.
 * @param {string} description
 * @param {string} release
 */
function historyUpTo(description, release) {
  return description
    .split("\n")
    .filter((line) => {
      const row = /^\|\s*(\d+(?:\.\d+)*)\s*\|/.exec(line.trim());
      return row === null || compareReleases(/** @type {string} */ (row[1]), release) <= 0;
    })
    .join("\n");
}

/** A marker line of a description, under a heading or beginning a paragraph: `<!-- x-since: "15.19" ... -->`. */
export const SECTION_MARKER = /^\s*<!--\s*x-since:\s*"([^"]*)".*-->\s*$/;
/** Any line that mentions a release marker in an HTML comment: SECTION_MARKER, or a mistyped one. */
const LOOKS_LIKE_MARKER = /<!--\s*x-(since|until)\b/;

/**
 * Drops the Markdown sections marked as introduced after `release` (the
 * heading, its marker and everything up to the next heading of the same or a
 * higher level), the paragraphs so marked (the marker line and the lines
 * after it up to the next blank line: a list or a code block with blank
 * lines in it takes a marker per paragraph), and every marker line.
 * @param {string} description
 * @param {string} release
 */
function sectionsUpTo(description, release) {
  const lines = description.split("\n");
  const kept = [];
  /** Level of the heading whose section is being dropped, or 0. */
  let dropping = 0;
  /** Whether the paragraph being read is marked for a later release. */
  let droppingParagraph = false;
  let droppedParagraph = false;
  for (let i = 0; i < lines.length; i++) {
    const line = /** @type {string} */ (lines[i]);
    const heading = HEADING.exec(line);
    if (heading !== null) {
      droppingParagraph = false;
      const level = /** @type {string} */ (heading[1]).length;
      if (dropping > 0 && level > dropping) continue;
      dropping = 0;
      const marker = SECTION_MARKER.exec(lines[i + 1] ?? "");
      if (marker !== null && isRelease(marker[1]) && compareReleases(/** @type {string} */ (marker[1]), release) > 0) {
        dropping = level;
        continue;
      }
    }
    if (dropping > 0) continue;
    if (line.trim() === "") droppingParagraph = false;
    const marker = SECTION_MARKER.exec(line);
    if (marker !== null) {
      // Right under a heading it marks the section (above); anywhere else, the paragraph it begins.
      const underHeading = HEADING.test(lines[i - 1] ?? "");
      if (!underHeading && isRelease(marker[1]) && compareReleases(/** @type {string} */ (marker[1]), release) > 0) droppingParagraph = true;
      continue;
    }
    if (droppingParagraph) droppedParagraph = true;
    else kept.push(line);
  }
  const text = kept.join("\n");
  if (!droppedParagraph) return text;
  // A dropped paragraph leaves its blank lines behind: one between paragraphs, none at the end.
  const joined = text.replace(/\n{3,}/g, "\n\n");
  return description.endsWith("\n") ? `${joined.trimEnd()}\n` : joined.trimEnd();
}

/**
 * Every description under `root` seen by sectionsUpTo: a paragraph of an
 * operation's or a response's description can be marked too.
 * @param {Node} root
 * @param {string} release
 */
function descriptionsUpTo(root, release) {
  forEachElement(root, "#", (node) => {
    if (typeof node.description === "string") node.description = sectionsUpTo(node.description, release);
  });
}

/**
 * @param {Map<Node, Set<string>>} lostProperties
 * @param {Node} schema
 * @param {string} name
 */
function lose(lostProperties, schema, name) {
  const names = lostProperties.get(schema) ?? new Set();
  names.add(name);
  lostProperties.set(schema, names);
}

/**
 * Follows local `$ref`s.
 * @param {Node} root
 * @param {unknown} node
 * @returns {unknown}
 */
function deref(root, node) {
  let current = node;
  for (let hops = 0; hops < 32 && isObject(current) && typeof current.$ref === "string"; hops++) {
    /** @type {unknown} */
    let target = root;
    for (const segment of current.$ref.replace(/^#\/?/, "").split("/")) target = isObject(target) ? target[unescape(segment)] : undefined;
    current = target;
  }
  return current;
}
