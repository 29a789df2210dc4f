/**
 * ACLs as upstream (wazo-auth) understands them: `.` separates segments,
 * `*` matches exactly one segment and `#` matches any number (zero or more).
 */

/**
 * Fills the path values into an operation's ACL template, e.g.
 * `agentd.agents.by-number.{agent_number}.read` with agent_number 1001.
 * A `.` inside a value becomes `_` so a value can never add segments.
 */
export function fillAcl(template: string, params: Readonly<Record<string, string>>): string {
  return template.replace(/\{([^}]+)\}/g, (_match, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`no value for {${name}} in ACL ${template}`);
    return value.replaceAll(".", "_");
  });
}

/** Whether one granted ACL pattern covers the required, concrete ACL. */
export function aclMatches(granted: string, required: string): boolean {
  return matchSegments(granted.split("."), 0, required.split("."), 0);
}

/** Whether any of the granted ACL patterns covers the required ACL. */
export function aclGranted(granted: readonly string[], required: string): boolean {
  return granted.some((pattern) => aclMatches(pattern, required));
}

function matchSegments(pattern: string[], p: number, target: string[], t: number): boolean {
  while (p < pattern.length) {
    const segment = pattern[p];
    if (segment === "#") {
      // `#` may swallow any number of segments: try every split point.
      for (let skip = t; skip <= target.length; skip++) {
        if (matchSegments(pattern, p + 1, target, skip)) return true;
      }
      return false;
    }
    if (t >= target.length) return false;
    if (segment !== "*" && segment !== target[t]) return false;
    p++;
    t++;
  }
  return t === target.length;
}

/**
 * Why `acl` cannot be granted, or null when it can: one or more segments
 * of visible ASCII, none empty. Anything else would never match a
 * required ACL, and a line break would forge rows in `agentd token list`.
 */
export function aclProblem(acl: string): string | null {
  if (!/^[\x21-\x7e]+$/.test(acl)) return `ACL ${JSON.stringify(acl)}: must be visible ASCII characters (no space, no control character)`;
  if (acl.split(".").some((segment) => segment === "")) return `ACL ${JSON.stringify(acl)}: has an empty segment (two dots in a row, or a dot at either end)`;
  return null;
}

