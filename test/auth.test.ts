// Token verifiers through real parts: the external one against a real HTTP
// auth service on an ephemeral port, the embedded one against the real SQL
// token store on a PGlite database.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { EmbeddedVerifier } from "../server/auth/embedded.js";
import { ExternalVerifier, type ExternalVerifierOptions } from "../server/auth/external.js";
import { migrate } from "../server/db/migrations.js";
import { openPglite } from "../server/db/pglite.js";
import type { Database } from "../server/db/sql.js";
import { SqlTokenStore } from "../server/store/sql-token-store.js";
import { AuthService } from "../devkit/auth-service.js";

const READ_ALL = "agentd.agents.read";
const PAUSE_1001 = "agentd.agents.by-number.1001.pause.create";
const INVALID = { ok: false, error: "invalid token or unauthorized" };
const FORBIDDEN = { ok: false, error: "insufficient permissions" };
const UNREACHABLE = { ok: false, error: "authentication server unreachable" };

describe("ExternalVerifier (wazo-auth compatible service)", () => {
  let service: AuthService;
  let verifier: ExternalVerifier | undefined;
  const logs: Array<{ details: object; message: string }> = [];

  function make(options: Partial<ExternalVerifierOptions> = {}): ExternalVerifier {
    verifier = new ExternalVerifier({
      url: service.url,
      // Generous: a loaded CI machine can take hundreds of milliseconds over a
      // first connection, and a check cut short reads as "unreachable". Tests of
      // the time-out itself set their own.
      timeoutMs: 3000,
      log: { warn: (details, message) => logs.push({ details, message }) },
      ...options,
    });
    return verifier;
  }

  beforeEach(async () => {
    service = new AuthService(
      new Map([
        ["admin-token", ["agentd.#"]],
        ["reader-token", [READ_ALL]],
        ["odd/tok?en#%&é", ["agentd.agents.*"]],
      ]),
    );
    await service.start();
    logs.length = 0;
  });

  afterEach(async () => {
    await verifier?.close();
    verifier = undefined;
    await service.stop();
  });

  it("204 allows, 404 is an invalid token, 403 is insufficient permissions", async () => {
    const v = make({ cacheTtlMs: 0 });
    expect(await v.verify("admin-token", PAUSE_1001)).toEqual({ ok: true });
    expect(await v.verify("reader-token", READ_ALL)).toEqual({ ok: true });
    expect(await v.verify("unknown-token", READ_ALL)).toEqual(INVALID);
    expect(await v.verify("reader-token", PAUSE_1001)).toEqual(FORBIDDEN);
  });

  it("asks HEAD /0.1/token/{token}?scope={acl} with both URL-encoded", async () => {
    const v = make();
    expect(await v.verify("odd/tok?en#%&é", "agentd.agents.read")).toEqual({ ok: true });
    expect(await v.verify("odd/tok?en#%&é", "agentd.agents.by-id.1.read")).toEqual(FORBIDDEN);
    expect(service.requests).toEqual([
      { method: "HEAD", token: "odd/tok?en#%&é", scope: "agentd.agents.read" },
      { method: "HEAD", token: "odd/tok?en#%&é", scope: "agentd.agents.by-id.1.read" },
    ]);
  });

  it("accepts a base URL with a trailing slash", async () => {
    const v = make({ url: `${service.url}/` });
    expect(await v.verify("admin-token", READ_ALL)).toEqual({ ok: true });
  });

  it("an empty token is invalid without asking", async () => {
    const v = make();
    expect(await v.verify("", READ_ALL)).toEqual(INVALID);
    expect(service.requests).toHaveLength(0);
  });

  // Found by a security review: `..` made the check HEAD /0.1/?scope=…, `.` HEAD
  // /0.1/token/?scope=…, which a lenient service answered 204.
  it("a token `.` or `..` is invalid without asking: it would be a dot segment of the check's path", async () => {
    const v = make();
    for (const token of [".", ".."]) expect(await v.verify(token, READ_ALL), token).toEqual(INVALID);
    expect(service.requests).toHaveLength(0);
    expect(await v.verify("...", READ_ALL)).toEqual(INVALID);
    expect(service.requests).toEqual([{ method: "HEAD", token: "...", scope: READ_ALL }]);
  });

  // Found by a security review: a flood of made-up tokens used up the check
  // budget, and a valid token was refused 429 once its cached answer expired,
  // or on an ACL not asked yet. Found by the review of that fix: exempting
  // known tokens from any budget let one refused everything (403) send the
  // service unlimited checks.
  it("a token the service has granted something takes its checks from a budget of its own, which made-up tokens cannot use up", async () => {
    const left = { known: 1, unknown: 2 };
    const taken: string[] = [];
    const v = make({
      cacheTtlMs: 0,
      checkBudget: (of) => {
        taken.push(of);
        return Promise.resolve(left[of]-- > 0 ? { ok: true } : { ok: false, retryAfterSeconds: 1 });
      },
    });
    const tooMany = { ok: false, error: "too many requests", retryAfterSeconds: 1 };
    expect(await v.verify("admin-token", READ_ALL)).toEqual({ ok: true });
    // A 403 makes no token known: its next check comes from the same budget, now used up.
    expect(await v.verify("reader-token", PAUSE_1001)).toEqual(FORBIDDEN);
    expect(await v.verify("reader-token", PAUSE_1001)).toEqual(tooMany);
    expect(await v.verify("unknown-token", READ_ALL)).toEqual(tooMany);
    // The granted token, on an ACL not asked yet, from its own budget; then that one is used up too.
    expect(await v.verify("admin-token", PAUSE_1001)).toEqual({ ok: true });
    expect(await v.verify("admin-token", PAUSE_1001)).toEqual(tooMany);
    expect(taken).toEqual(["unknown", "unknown", "unknown", "unknown", "known", "known"]);
    expect(service.requests.map((r) => r.token)).toEqual(["admin-token", "reader-token", "admin-token"]);
    // Revoked: its checks come from the other budget again.
    left.known = 1;
    left.unknown = 0;
    service.tokens.delete("admin-token");
    expect(await v.verify("admin-token", READ_ALL)).toEqual(INVALID);
    expect(await v.verify("admin-token", READ_ALL)).toEqual(tooMany);
    expect(taken.slice(-2)).toEqual(["known", "unknown"]);
  });

  it("caches a positive answer per (token, acl)", async () => {
    const v = make();
    expect(await v.verify("admin-token", READ_ALL)).toEqual({ ok: true });
    expect(await v.verify("admin-token", READ_ALL)).toEqual({ ok: true });
    expect(service.requests).toHaveLength(1);
    // Another ACL or another token is another question.
    expect(await v.verify("admin-token", PAUSE_1001)).toEqual({ ok: true });
    expect(await v.verify("reader-token", READ_ALL)).toEqual({ ok: true });
    expect(service.requests).toHaveLength(3);
    // Even when the service goes away, the cached answer stands within the TTL.
    await service.stop();
    expect(await v.verify("admin-token", READ_ALL)).toEqual({ ok: true });
  });

  it("never caches a refusal: each 404/403 is asked again, and a fixed token works at once", async () => {
    const v = make();
    expect(await v.verify("new-token", READ_ALL)).toEqual(INVALID);
    expect(await v.verify("new-token", READ_ALL)).toEqual(INVALID);
    expect(await v.verify("reader-token", PAUSE_1001)).toEqual(FORBIDDEN);
    expect(await v.verify("reader-token", PAUSE_1001)).toEqual(FORBIDDEN);
    expect(service.requests).toHaveLength(4);
    service.tokens.set("new-token", [READ_ALL]);
    service.tokens.set("reader-token", ["agentd.#"]);
    expect(await v.verify("new-token", READ_ALL)).toEqual({ ok: true });
    expect(await v.verify("reader-token", PAUSE_1001)).toEqual({ ok: true });
  });

  it("a cached answer expires after the TTL, so a revocation takes effect", async () => {
    let now = 1_000_000;
    const v = make({ cacheTtlMs: 10_000, clock: { now: () => now } });
    expect(await v.verify("admin-token", READ_ALL)).toEqual({ ok: true });
    service.tokens.delete("admin-token");
    now += 9_000;
    expect(await v.verify("admin-token", READ_ALL)).toEqual({ ok: true });
    expect(service.requests).toHaveLength(1);
    now += 2_000;
    expect(await v.verify("admin-token", READ_ALL)).toEqual(INVALID);
    expect(service.requests).toHaveLength(2);
  });

  it("the TTL also runs on the real clock", async () => {
    const v = make({ cacheTtlMs: 150 });
    expect(await v.verify("admin-token", READ_ALL)).toEqual({ ok: true });
    expect(await v.verify("admin-token", READ_ALL)).toEqual({ ok: true });
    expect(service.requests).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 250));
    expect(await v.verify("admin-token", READ_ALL)).toEqual({ ok: true });
    expect(service.requests).toHaveLength(2);
  });

  it("cacheTtlMs 0 disables the cache", async () => {
    const v = make({ cacheTtlMs: 0 });
    for (let i = 0; i < 3; i++) expect(await v.verify("admin-token", READ_ALL)).toEqual({ ok: true });
    expect(service.requests).toHaveLength(3);
  });

  it("the cache is bounded: the least recently used answer is dropped", async () => {
    const v = make({ cacheSize: 2 });
    await v.verify("admin-token", "agentd.a");
    await v.verify("admin-token", "agentd.b");
    await v.verify("admin-token", "agentd.c");
    expect(service.requests).toHaveLength(3);
    await v.verify("admin-token", "agentd.c");
    await v.verify("admin-token", "agentd.b");
    expect(service.requests).toHaveLength(3);
    await v.verify("admin-token", "agentd.a");
    expect(service.requests).toHaveLength(4);
  });

  it("keeps the connection alive between checks", async () => {
    const v = make({ cacheTtlMs: 0 });
    for (let i = 0; i < 10; i++) expect(await v.verify("admin-token", READ_ALL)).toEqual({ ok: true });
    expect(service.requests).toHaveLength(10);
    // undici may open a second connection while the first answer is still
    // being completed; after that the pool is reused, not one per check.
    expect(service.connections).toBeLessThanOrEqual(2);
  });

  it("answers many concurrent checks correctly", async () => {
    const v = make({ cacheTtlMs: 0, timeoutMs: 5000 });
    const verdicts = await Promise.all(
      Array.from({ length: 50 }, (_, i) => v.verify(i % 2 === 0 ? "reader-token" : "nobody", READ_ALL)),
    );
    expect(verdicts.filter((x) => x.ok)).toHaveLength(25);
    expect(verdicts.filter((x) => !x.ok && x.error === "invalid token or unauthorized")).toHaveLength(25);
  });

  describe("fails closed", () => {
    it("a slow service (beyond the time-out) is unreachable: the time-out ends the check, not the service", async () => {
      const v = make({ timeoutMs: 200 });
      service.mode = "slow";
      // Longer than the test's own time-out: only the verifier's time-out can end the check in time.
      service.slowMs = 120_000;
      expect(await v.verify("admin-token", READ_ALL)).toEqual(UNREACHABLE);
    });

    it("a slow answer under the time-out is still an answer", async () => {
      const v = make({ timeoutMs: 2000 });
      service.mode = "slow";
      service.slowMs = 100;
      expect(await v.verify("admin-token", READ_ALL)).toEqual({ ok: true });
    });

    it("an unexpected answer (200 with HTML, 500) is unreachable, never allowed", async () => {
      const v = make();
      service.mode = "garbage";
      expect(await v.verify("admin-token", READ_ALL)).toEqual(UNREACHABLE);
      service.mode = "error";
      expect(await v.verify("admin-token", READ_ALL)).toEqual(UNREACHABLE);
    });

    it("a service that is down is unreachable", async () => {
      const v = make();
      await service.stop();
      expect(await v.verify("admin-token", READ_ALL)).toEqual(UNREACHABLE);
      expect(await v.verify("reader-token", PAUSE_1001)).toEqual(UNREACHABLE);
    });

    it("a URL nobody listens on is unreachable", async () => {
      const other = new AuthService();
      const url = await other.start();
      await other.stop();
      const v = make({ url });
      expect(await v.verify("admin-token", READ_ALL)).toEqual(UNREACHABLE);
    });

    it("failures are not cached: the service is asked again and recovers at once", async () => {
      // Under the service's slowMs, so "slow" times out.
      const v = make({ timeoutMs: 1000 });
      for (const mode of ["garbage", "error", "slow"] as const) {
        service.mode = mode;
        expect(await v.verify("admin-token", READ_ALL), mode).toEqual(UNREACHABLE);
      }
      expect(service.requests).toHaveLength(3);
      service.mode = "normal";
      expect(await v.verify("admin-token", READ_ALL)).toEqual({ ok: true });
      expect(service.requests).toHaveLength(4);
    });

    it("comes back after the service restarts on the same port", async () => {
      const v = make();
      const port = Number(new URL(service.url).port);
      await service.stop();
      expect(await v.verify("admin-token", READ_ALL)).toEqual(UNREACHABLE);
      service = new AuthService(new Map([["admin-token", ["agentd.#"]]]));
      await service.start(port);
      expect(await v.verify("admin-token", READ_ALL)).toEqual({ ok: true });
    });

    // The server closes the verifier once it stops listening: a check still
    // waiting on a slow service must not hold the process's stop.
    it("close() abandons a check still waiting on a slow service, which then reads as unreachable", async () => {
      const v = make({ timeoutMs: 120_000 });
      service.mode = "slow";
      service.slowMs = 120_000;
      const pending = v.verify("admin-token", READ_ALL);
      await vi.waitFor(() => expect(service.requests).toHaveLength(1));
      // Only destroying the connection ends this before the test's own time-out.
      await v.close();
      expect(await pending).toEqual(UNREACHABLE);
      // Found by an operator's walk: a stop logged this as the service unreachable.
      expect(logs).toEqual([]);
    }, 10_000);

    it("logs why, but never the token", async () => {
      // Under the service's slowMs, so "slow" times out; long enough for "garbage" to be answered.
      const v = make({ timeoutMs: 1000 });
      const secret = "very-secret-token-value";
      service.mode = "garbage";
      await v.verify(secret, READ_ALL);
      service.mode = "slow";
      await v.verify(secret, READ_ALL);
      await service.stop();
      await v.verify(secret, READ_ALL);
      expect(logs).toHaveLength(3);
      const text = JSON.stringify(logs);
      expect(text).not.toContain(secret);
      expect(text).toContain(service.url);
      expect(logs[0]).toMatchObject({ details: { status: 200 } });
      expect(JSON.stringify(logs[1])).toMatch(/TimeoutError|AbortError/);
      expect(JSON.stringify(logs[2])).toMatch(/ECONNREFUSED/);
    });
  });

  it("works with an injected fetch (global fetch)", async () => {
    const v = make({ fetch: (url, init) => fetch(url, init) });
    expect(await v.verify("admin-token", READ_ALL)).toEqual({ ok: true });
    expect(await v.verify("reader-token", PAUSE_1001)).toEqual(FORBIDDEN);
  });
});

/** An embedded token's verdict: allowed, with the token's id. */
const ALLOWED = { ok: true, tokenId: expect.stringMatching(/^[0-9a-f]{12}$/) };

describe("EmbeddedVerifier on the SQL token store (PGlite)", () => {
  let dir: string;
  let db: Database;
  let clock = Date.parse("2026-01-01T00:00:00Z");
  let tokens: SqlTokenStore;
  let verifier: EmbeddedVerifier;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "agentd-auth-"));
    db = await openPglite(dir);
    await migrate(db);
    tokens = new SqlTokenStore(db, () => clock);
    verifier = new EmbeddedVerifier(tokens, () => new Date(clock));
  });

  afterAll(async () => {
    await db?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("an unknown token is invalid", async () => {
    expect(await verifier.verify("no-such-token", READ_ALL)).toEqual(INVALID);
    expect(await verifier.verify("", READ_ALL)).toEqual(INVALID);
  });

  it("a known token is allowed for its ACL and refused others", async () => {
    const { token, id } = await tokens.create([READ_ALL, "agentd.agents.by-id.7.read"], null);
    // Its id goes with the verdict, for the access log.
    expect(await verifier.verify(token, READ_ALL)).toEqual({ ok: true, tokenId: id });
    expect(await verifier.verify(token, "agentd.agents.by-id.7.read")).toEqual(ALLOWED);
    expect(await verifier.verify(token, "agentd.agents.by-id.8.read")).toEqual(FORBIDDEN);
    expect(await verifier.verify(token, PAUSE_1001)).toEqual(FORBIDDEN);
  });

  it("a token without any ACL is refused everything", async () => {
    const token = (await tokens.create([], null)).token;
    expect(await verifier.verify(token, READ_ALL)).toEqual(FORBIDDEN);
  });

  it("* grants one segment, # any number", async () => {
    const star = (await tokens.create(["agentd.agents.by-number.*.pause.create"], null)).token;
    expect(await verifier.verify(star, PAUSE_1001)).toEqual(ALLOWED);
    expect(await verifier.verify(star, "agentd.agents.by-number.1002.pause.create")).toEqual(ALLOWED);
    expect(await verifier.verify(star, "agentd.agents.by-number.1001.read")).toEqual(FORBIDDEN);
    expect(await verifier.verify(star, READ_ALL)).toEqual(FORBIDDEN);

    const admin = (await tokens.create(["agentd.#"], null)).token;
    for (const acl of [READ_ALL, PAUSE_1001, "agentd.agents.by-id.1.read"]) {
      expect(await verifier.verify(admin, acl)).toEqual(ALLOWED);
    }
    expect(await verifier.verify(admin, "other.agents.read")).toEqual(FORBIDDEN);
  });

  it("a token is invalid from the moment it expires", async () => {
    const token = (await tokens.create(["agentd.#"], 60)).token;
    expect(await verifier.verify(token, READ_ALL)).toEqual(ALLOWED);
    clock += 59_999;
    expect(await verifier.verify(token, READ_ALL)).toEqual(ALLOWED);
    clock += 1;
    expect(await verifier.verify(token, READ_ALL)).toEqual(INVALID);
    // Expiry wins over the ACL check: no hint that the token once existed.
    expect(await verifier.verify(token, "other.acl")).toEqual(INVALID);
  });

  it("a revoked token is invalid on the very next check (nothing cached)", async () => {
    const token = (await tokens.create(["agentd.#"], null)).token;
    expect(await verifier.verify(token, READ_ALL)).toEqual(ALLOWED);
    expect(await tokens.revoke(token)).toBe(true);
    expect(await verifier.verify(token, READ_ALL)).toEqual(INVALID);
  });

  it("AGENTD_ADMIN_TOKEN-style ensured tokens work, and a near-miss token does not", async () => {
    await tokens.ensure("scripted-admin-token-0123456789", ["agentd.#"]);
    expect(await verifier.verify("scripted-admin-token-0123456789", PAUSE_1001)).toEqual(ALLOWED);
    expect(await verifier.verify("scripted-admin-token-012345678", PAUSE_1001)).toEqual(INVALID);
    expect(await verifier.verify("SCRIPTED-ADMIN-TOKEN-0123456789", PAUSE_1001)).toEqual(INVALID);
  });
});
