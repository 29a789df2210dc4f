// Release numbers as the contract writes them: quoted strings of dot-separated
// integers ("15.18"), compared number by number, so 15.18 comes after 15.9.

/** @param {unknown} release @returns {release is string} */
export function isRelease(release) {
  return typeof release === "string" && /^\d+(\.\d+)*$/.test(release);
}

/**
 * Negative when a is older than b, 0 when they are the same release, positive when newer.
 * @param {string} a
 * @param {string} b
 */
export function compareReleases(a, b) {
  const left = a.split(".").map(Number);
  const right = b.split(".").map(Number);
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    const difference = (left[i] ?? 0) - (right[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

/**
 * The releases the contract lists in info.x-releases, oldest first.
 * @param {unknown} root the parsed contract
 * @returns {[string, ...string[]]}
 */
export function listedReleases(root) {
  const releases = /** @type {{ info?: { "x-releases"?: unknown } } | null | undefined} */ (root)?.info?.["x-releases"];
  if (!Array.isArray(releases) || releases.length === 0 || !releases.every(isRelease)) {
    throw new Error('info.x-releases must list the releases as quoted strings, oldest first, e.g. ["15.14", "15.15"]');
  }
  return /** @type {[string, ...string[]]} */ (releases);
}

/**
 * Whether an element marked with `x-since`/`x-until` is part of `release`:
 * introduced in or before it, and not yet removed.
 * @param {{ "x-since"?: unknown, "x-until"?: unknown }} element
 * @param {string} release
 */
export function presentIn(element, release) {
  const since = element["x-since"];
  const until = element["x-until"];
  if (typeof since === "string" && compareReleases(since, release) > 0) return false;
  if (typeof until === "string" && compareReleases(until, release) <= 0) return false;
  return true;
}
