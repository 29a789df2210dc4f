// ACL templates and matching as upstream (wazo-auth) does them.
import { describe, expect, it } from "vitest";
import { runAdmin, type AdminDeps } from "../server/admin/run-admin.js";
import { aclGranted, aclMatches, aclProblem, fillAcl } from "../server/auth/acl.js";

describe("fillAcl", () => {
  it("fills path values into the contract's templates", () => {
    expect(fillAcl("agentd.agents.by-number.{agent_number}.pause.create", { agent_number: "1001" })).toBe(
      "agentd.agents.by-number.1001.pause.create",
    );
    expect(fillAcl("agentd.agents.by-id.{agent_id}.read", { agent_id: "42" })).toBe("agentd.agents.by-id.42.read");
    expect(fillAcl("agentd.agents.read", {})).toBe("agentd.agents.read");
  });

  it("replaces a . inside a value by _ so a value cannot add segments", () => {
    const acl = fillAcl("agentd.agents.by-number.{agent_number}.read", { agent_number: "10.01.x" });
    expect(acl).toBe("agentd.agents.by-number.10_01_x.read");
    expect(acl.split(".")).toHaveLength(5);
    // A value shaped like a wildcard is a literal segment, not a pattern.
    expect(aclMatches("agentd.agents.by-number.1001.read", fillAcl("agentd.agents.by-number.{n}.read", { n: "*" }))).toBe(false);
  });

  it("fills every placeholder and refuses a missing one", () => {
    expect(fillAcl("a.{x}.b.{y}", { x: "1", y: "2" })).toBe("a.1.b.2");
    expect(() => fillAcl("a.{x}.b", {})).toThrow(/\{x\}/);
  });
});

describe("aclMatches", () => {
  const required = "agentd.agents.by-number.1001.pause.create";

  it("matches an identical ACL only", () => {
    expect(aclMatches(required, required)).toBe(true);
    expect(aclMatches("agentd.agents.by-number.1002.pause.create", required)).toBe(false);
    expect(aclMatches("agentd.agents.by-number.1001.pause", required)).toBe(false);
    expect(aclMatches(`${required}.more`, required)).toBe(false);
    expect(aclMatches("agentd.agents.read", "agentd.agents.read.extra")).toBe(false);
  });

  it("* matches exactly one segment", () => {
    expect(aclMatches("agentd.agents.by-number.*.pause.create", required)).toBe(true);
    expect(aclMatches("agentd.*.read", "agentd.agents.read")).toBe(true);
    expect(aclMatches("agentd.*.read", "agentd.read")).toBe(false);
    expect(aclMatches("agentd.*.read", "agentd.agents.by-id.read")).toBe(false);
    expect(aclMatches("agentd.agents.by-number.*", required)).toBe(false);
  });

  it("# matches zero or more segments", () => {
    expect(aclMatches("agentd.#", required)).toBe(true);
    expect(aclMatches("agentd.#", "agentd.agents.read")).toBe(true);
    expect(aclMatches("agentd.#", "agentd")).toBe(true);
    expect(aclMatches("#", required)).toBe(true);
    expect(aclMatches("agentd.#", "other.agents.read")).toBe(false);
    expect(aclMatches("agentd.agents.#", "agentd.agentsx.read")).toBe(false);
  });

  it("# in the middle spans any number of segments, including none", () => {
    expect(aclMatches("agentd.#.read", "agentd.agents.by-id.42.read")).toBe(true);
    expect(aclMatches("agentd.#.read", "agentd.agents.read")).toBe(true);
    expect(aclMatches("agentd.#.read", "agentd.read")).toBe(true);
    expect(aclMatches("agentd.#.read", "agentd.agents.by-number.1001.pause.create")).toBe(false);
    expect(aclMatches("agentd.#.pause.#", required)).toBe(true);
    expect(aclMatches("agentd.#.*.create", required)).toBe(true);
  });

  it("a wildcard in the required ACL is a literal, not a pattern", () => {
    expect(aclMatches("agentd.agents.read", "agentd.*.read")).toBe(false);
    expect(aclMatches("agentd.agents.read", "agentd.#")).toBe(false);
  });
});

describe("aclGranted", () => {
  it("grants when any pattern matches and refuses an empty list", () => {
    expect(aclGranted(["agentd.agents.read", "agentd.agents.by-id.*.read"], "agentd.agents.by-id.7.read")).toBe(true);
    expect(aclGranted(["agentd.agents.read"], "agentd.agents.by-id.7.read")).toBe(false);
    expect(aclGranted([], "agentd.agents.read")).toBe(false);
  });
});

describe("aclProblem: what a token may be granted", () => {
  it("accepts ACLs of visible ASCII segments, wildcards included", () => {
    for (const acl of ["agentd.#", "agentd.agents.read", "agentd.agents.by-number.*.pause.create", "agentd.agents.by-id.1_2.read", "#"]) {
      expect(aclProblem(acl), acl).toBeNull();
    }
  });

  it("refuses an empty segment, space, control characters and anything not ASCII", () => {
    for (const acl of ["", "agentd..agents", ".agentd", "agentd.", "agentd agents", "agentd.#\nFORGED", "agentd.\u0000", "agentd.agénts"]) {
      expect(aclProblem(acl), JSON.stringify(acl)).toMatch(/^ACL /);
    }
  });

  it("is checked by the admin socket's token.create too, before anything is written", async () => {
    const untouched = new Proxy({}, { get: () => () => Promise.reject(new Error("nothing may be written")) });
    const deps = { tokens: untouched, store: untouched, db: untouched, configuredSinks: [], authUrl: null } as unknown as AdminDeps;
    expect(await runAdmin({ op: "token.create", acls: ["agentd.#", "a..b"], ttlSeconds: null }, deps)).toEqual({
      ok: false,
      error: "invalid token settings",
      problems: ['ACL "a..b": has an empty segment (two dots in a row, or a dot at either end)'],
    });
    expect(await runAdmin({ op: "token.create", acls: [], ttlSeconds: null }, deps)).toMatchObject({ ok: false, problems: ["at least one ACL is needed"] });
    for (const ttlSeconds of [0, 1.5, 1e20]) {
      expect(await runAdmin({ op: "token.create", acls: ["agentd.#"], ttlSeconds }, deps), String(ttlSeconds)).toMatchObject({
        ok: false,
        problems: ["ttlSeconds: must be a whole number of seconds from 1 to 100 years"],
      });
    }
  });
});
