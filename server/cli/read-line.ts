/**
 * The first line of `input` (without its line ending and surrounding
 * spaces), or null when it ends before any character: how the CLI reads a
 * secret that must not appear on its command line (visible in `ps`, kept in
 * shell history). Reads at most `limit` characters, so a file piped in by
 * mistake is refused rather than held in memory.
 */
export async function readFirstLine(input: NodeJS.ReadableStream, limit: number): Promise<string | null> {
  input.setEncoding("utf8");
  let text = "";
  for await (const chunk of input as AsyncIterable<string>) {
    text += chunk;
    const newline = text.indexOf("\n");
    if (newline >= 0) {
      text = text.slice(0, newline);
      break;
    }
    if (text.length > limit) break;
  }
  if (text.length > limit) throw new RangeError(`the first line is longer than ${limit} characters`);
  const line = text.trim();
  return line === "" ? null : line;
}
