// Text that is not well-formed Unicode never reaches the store
// (server/http/well-formed-body.ts), through a real server on the embedded
// database: a lone UTF-16 surrogate escaped in JSON, or bytes that are not
// UTF-8, are refused with the contract's 400 and change nothing, while text with characters outside
// the BMP, control and bidirectional characters is stored as sent and
// answered the same from the cache and, after a restart, from the database.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SUITE_AGENTS } from "./helpers/agents.js";
import { ownDataDir } from "./helpers/data-dir.js";
import { startTestServer } from "./helpers/server.js";

const AGENT = SUITE_AGENTS.pausable;
const PAUSE = `/agents/by-number/${AGENT.number}/pause`;
const STATUS = `/agents/by-number/${AGENT.number}`;

describe("well-formed Unicode in request bodies", () => {
  it("a lone surrogate is refused with 400 and stores nothing; well-formed text reads back the same after a restart", async () => {
    const tmp = await mkdtemp(path.join(tmpdir(), "agentd-unicode-"));
    const dataDir = path.join(tmp, "data");
    await ownDataDir(dataDir, [AGENT]);
    // Outside the BMP, control and bidirectional characters: stored as sent.
    const reason = "😀 \u001b[31mred\u001b[0m\r\n\u202eevil";
    try {
      const first = await startTestServer({ AGENTD_DATA_DIR: dataDir });
      try {
        for (const [rawBody, pointer] of [
          ['{"reason":"\\ud800x"}', "/reason"],
          ['{"reason":"x\\udfff"}', "/reason"],
          ['{"reason":"\\udc00\\ud800"}', "/reason"], // a pair in the wrong order is two lone halves
          ['{"\\ud800":"x"}', "/\ud800"],
          // Nested deeper than a recursive walk could go.
          [`{"reason":${"[".repeat(5000)}"\\ud800"${"]".repeat(5000)}}`, `/reason${"/0".repeat(5000)}`],
        ] as const) {
          const answer = await first.call("POST", PAUSE, { rawBody, headers: { "content-type": "application/json" } });
          expect(answer.status, rawBody).toBe(400);
          expect(answer.json, rawBody).toEqual({
            error: "invalid request",
            details: [{ location: "body", path: pointer, message: "must be well-formed Unicode (no lone surrogate)" }],
          });
        }
        // Bytes that are not UTF-8 (a surrogate encoded as bytes, bytes no UTF-8 has, an overlong
        // NUL), which the body parser would otherwise store as U+FFFD.
        for (const bytes of [[0xed, 0xa0, 0x80], [0xff, 0xfe], [0xc0, 0x80]]) {
          const rawBody = Buffer.concat([Buffer.from('{"reason":"'), Buffer.from(bytes), Buffer.from('"}')]);
          const answer = await first.call("POST", PAUSE, { rawBody, headers: { "content-type": "application/json" } });
          expect([answer.status, answer.json], rawBody.toString("hex")).toEqual([
            400,
            { error: "invalid request", details: [{ location: "body", path: "", message: "must be UTF-8 (the body holds bytes that are not)" }] },
          ]);
        }
        expect((await first.call("GET", STATUS)).json).toMatchObject({ paused: false, paused_reason: null });

        // An escaped surrogate pair is one character, and so is its UTF-8 form.
        expect((await first.call("POST", PAUSE, { rawBody: JSON.stringify({ reason }).replace("😀", "\\ud83d\\ude00"), headers: { "content-type": "application/json" } })).status).toBe(204);
        expect((await first.call("GET", STATUS)).json).toMatchObject({ paused: true, paused_reason: reason });
      } finally {
        await first.close();
      }

      const second = await startTestServer({ AGENTD_DATA_DIR: dataDir });
      try {
        expect((await second.call("GET", STATUS)).json).toMatchObject({ paused: true, paused_reason: reason });
      } finally {
        await second.close();
      }
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  });
});
