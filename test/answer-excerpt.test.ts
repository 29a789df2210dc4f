// What a webhook receiver said when it refused an event, as the log and
// `agentd events list --sink` show it: the start of its answer, on one
// line, with what could be the URL's secret masked however the receiver
// wrote it. The refused-delivery test in events.test.ts runs it through a
// real receiver; here, each case the receiver could write.
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { EXCERPT_LENGTH, answerExcerpt, excerpt, urlSecrets } from "../server/events/answer-excerpt.js";

const URL_WITH_SECRETS = new URL("https://hooks.example/in?token=Ab%2Fcd%2Bef%3D%3D&note=a%20b%20c%20d&v=1");
const secrets = urlSecrets(URL_WITH_SECRETS);
const of = (text: string): string => excerpt(text, false, secrets);

/** A body as undici gives it: a stream of these chunks. */
const chunks = (...parts: Buffer[]): Readable => Readable.from(parts);

describe("a receiver's answer as a failure's reason", () => {
  it("masks every query string it echoes, whatever it holds", () => {
    expect(of("Cannot POST /in?token=Ab%2Fcd%2Bef%3D%3D&note=a%20b%20c%20d&v=1")).toBe("Cannot POST /in?…");
    expect(of('{"url": "https://hooks.example/in?x=anything"}')).toBe('{"url": "https://hooks.example/in?…"}');
    // A question mark that ends a sentence is left alone.
    expect(of("Is this JSON? It is not.")).toBe("Is this JSON? It is not.");
  });

  it("masks a query value of the URL wherever it stands, as sent, decoded, encoded again, in any case, or JSON-escaped", () => {
    expect(of('{"token": "Ab/cd+ef=="}')).toBe('{"token": "…"}');
    expect(of("token Ab%2Fcd%2Bef%3D%3D")).toBe("token …");
    expect(of("token ab%2fcd%2bef%3d%3d")).toBe("token …");
    expect(of('{"token": "Ab\\/cd+ef=="}')).toBe('{"token": "…"}');
    expect(of("note a+b+c+d, note a%20b%20c%20d, note a b c d")).toBe("note …, note …, note …");
  });

  it("leaves a short query value where it is not in a query string: masked everywhere, v=1 would mask every 1", () => {
    expect(secrets).not.toContain("1");
    expect(of("line 1, column 1")).toBe("line 1, column 1");
  });

  it("drops a secret's start when the text decoded stops inside it", () => {
    const cut = `bad token ${"z".repeat(30)} Ab/cd+e`;
    expect(excerpt(cut, true, secrets)).toMatch(/^bad token z+$/);
    // Whole, it would have been masked; a text that ends there is left as it is.
    expect(excerpt(cut, false, secrets)).toBe(cut);
  });

  it("is one line without control characters, at most 200 characters, never a character cut in two", async () => {
    expect(of("line one\r\n\tline two\u0007\u009b31m")).toBe("line one line two 31m");
    expect(of("é".repeat(300))).toBe("é".repeat(EXCERPT_LENGTH));
    expect(await answerExcerpt(chunks(Buffer.from("ab"), Buffer.from("é".repeat(300)).subarray(0, 4095)), [])).toBe(`ab${"é".repeat(EXCERPT_LENGTH - 2)}`);
    // UTF-16 read as UTF-8: a NUL between letters, deleted before the secret is looked for.
    expect(await answerExcerpt(chunks(Buffer.from('{"token": "Ab/cd+ef=="}', "utf16le")), secrets)).toBe('{"token": "…"}');
  });

  it("reads an ordinary answer to its end, and stops past 64 KiB", async () => {
    let pulled = 0;
    function* endless(): Generator<Buffer> {
      for (;;) {
        pulled++;
        yield Buffer.alloc(1024, "x");
      }
    }
    expect(await answerExcerpt(Readable.from(endless()), [])).toBe("x".repeat(EXCERPT_LENGTH));
    expect(pulled).toBeLessThanOrEqual(64 + 16);
    pulled = 0;
    function* short(): Generator<Buffer> {
      for (let i = 0; i < 10; i++) {
        pulled++;
        yield Buffer.alloc(1024, "y");
      }
    }
    const body = Readable.from(short());
    expect(await answerExcerpt(body, [])).toBe("y".repeat(EXCERPT_LENGTH));
    expect(pulled).toBe(10);
    expect(body.readableEnded).toBe(true);
  });

  it("gives what came of an answer cut short", async () => {
    const cut = new Readable({ read() {} });
    cut.push(Buffer.from("partial reason"));
    setImmediate(() => cut.destroy(new Error("socket hang up")));
    expect(await answerExcerpt(cut, [])).toBe("partial reason");
  });
});
