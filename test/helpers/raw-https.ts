// A deliberately dumb HTTP/1.1-over-TLS client for the fuzzer. Node's and
// undici's clients refuse or normalise exactly the requests a fuzzer needs
// (raw non-ASCII paths, duplicate or odd headers, unknown methods, bodies on
// GET), so this one writes the request bytes it is given, verbatim, and
// parses the answer itself. Connections are kept alive and reused.
import tls from "node:tls";

export interface RawAnswer {
  status: number;
  /** Header names lower-cased, in arrival order (duplicates kept). */
  headers: Array<[string, string]>;
  body: Buffer;
  /** The server closed the connection after this answer. */
  closed: boolean;
}

export interface RawRequest {
  /** The whole request head and body, exactly as sent. */
  bytes: Buffer;
  /** HEAD answers carry no body whatever their Content-Length says. */
  head: boolean;
  /** Close the connection after this exchange (for requests that may leave it in an unknown state). */
  once?: boolean;
}

export function header(answer: RawAnswer, name: string): string | undefined {
  return answer.headers.find(([key]) => key === name)?.[1];
}

/** Builds request bytes; header values and path are written as given (latin1 for strings, so bytes survive). */
export function requestBytes(method: string, target: string | Buffer, headers: Array<[string, string | Buffer]>, body?: Buffer): Buffer {
  const parts: Buffer[] = [Buffer.from(`${method} `, "latin1"), typeof target === "string" ? Buffer.from(target, "utf8") : target, Buffer.from(" HTTP/1.1\r\n", "latin1")];
  for (const [name, value] of headers) {
    parts.push(Buffer.from(`${name}: `, "latin1"), typeof value === "string" ? Buffer.from(value, "utf8") : value, Buffer.from("\r\n", "latin1"));
  }
  parts.push(Buffer.from("\r\n", "latin1"));
  if (body) parts.push(body);
  return Buffer.concat(parts);
}

class Connection {
  private buffer: Buffer = Buffer.alloc(0);
  private ended = false;
  private waiter: (() => void) | null = null;
  readonly ready: Promise<void>;

  constructor(private readonly socket: tls.TLSSocket) {
    this.ready = new Promise((resolve, reject) => {
      socket.once("secureConnect", resolve);
      socket.once("error", reject);
    });
    socket.on("data", (chunk: Buffer) => {
      this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
      this.wake();
    });
    // A reset while we still write a large body is expected when the server
    // answered early (413) and closed: what matters is the answer we read.
    socket.on("error", () => this.finish());
    socket.on("end", () => this.finish());
    socket.on("close", () => this.finish());
  }

  get usable(): boolean {
    return !this.ended && !this.socket.destroyed;
  }

  private finish(): void {
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
  }

  private more(): Promise<void> {
    if (this.ended) return Promise.resolve();
    return new Promise((resolve) => (this.waiter = resolve));
  }

  destroy(): void {
    this.socket.destroy();
  }

  async exchange(request: RawRequest): Promise<RawAnswer> {
    this.buffer = Buffer.alloc(0);
    this.socket.write(request.bytes);

    let start = 0;
    let headEnd: number;
    let lines: string[];
    let status: number;
    // Interim answers (100 Continue after `Expect: 100-continue`) precede the real one.
    for (;;) {
      while ((headEnd = this.buffer.indexOf("\r\n\r\n", start)) < 0) {
        if (this.ended) throw new Error(`connection closed without an answer (got ${JSON.stringify(this.buffer.toString("latin1"))})`);
        await this.more();
      }
      lines = this.buffer.subarray(start, headEnd).toString("latin1").split("\r\n");
      const statusLine = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? "");
      if (!statusLine) throw new Error(`not an HTTP status line: ${JSON.stringify(lines[0])}`);
      status = Number(statusLine[1]);
      if (status >= 200 || status === 101) break;
      start = headEnd + 4;
    }
    const headers: Array<[string, string]> = lines.slice(1).map((line) => {
      const colon = line.indexOf(":");
      return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
    });
    const get = (name: string) => headers.find(([key]) => key === name)?.[1];
    // `at` walks through this.buffer, which grows as data arrives.
    let at = headEnd + 4;
    const need = async (n: number): Promise<void> => {
      while (this.buffer.length < at + n) {
        if (this.ended) throw new Error(`connection closed mid-body (${this.buffer.length - at}/${n} bytes)`);
        await this.more();
      }
    };
    const take = async (n: number): Promise<Buffer> => {
      await need(n);
      const out = Buffer.from(this.buffer.subarray(at, at + n));
      at += n;
      return out;
    };

    let body: Buffer;
    if (request.head || status === 204 || status === 304 || status === 101) {
      body = Buffer.alloc(0);
    } else if (/chunked/i.test(get("transfer-encoding") ?? "")) {
      const chunks: Buffer[] = [];
      for (;;) {
        let lineEnd: number;
        while ((lineEnd = this.buffer.indexOf("\r\n", at)) < 0) {
          if (this.ended) throw new Error("connection closed mid-chunk");
          await this.more();
        }
        const size = parseInt(this.buffer.subarray(at, lineEnd).toString("latin1"), 16);
        at = lineEnd + 2;
        if (size === 0) {
          await take(2);
          break;
        }
        chunks.push(await take(size));
        await take(2);
      }
      body = Buffer.concat(chunks);
    } else if (get("content-length") !== undefined) {
      body = await take(Number(get("content-length")));
    } else {
      // No framing: the body runs to the end of the connection.
      while (!this.ended) await this.more();
      body = Buffer.from(this.buffer.subarray(at));
    }
    const closed = /close/i.test(get("connection") ?? "") || this.ended;
    return { status, headers, body, closed };
  }
}

/**
 * A small pool of keep-alive TLS connections. `send` never rejects for a
 * reset connection on which an answer was fully read; it rejects when the
 * server gave no (complete) answer within `timeoutMs`.
 */
export class RawHttpsClient {
  private idle: Connection[] = [];
  /** Connections opened, to show keep-alive works. */
  opened = 0;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly ca: string,
    private readonly timeoutMs = 15_000,
  ) {}

  private async connection(): Promise<Connection> {
    for (let c = this.idle.pop(); c; c = this.idle.pop()) {
      if (c.usable) return c;
    }
    this.opened++;
    const connection = new Connection(tls.connect({ host: this.host, port: this.port, ca: this.ca }));
    await connection.ready;
    return connection;
  }

  async send(request: RawRequest): Promise<RawAnswer> {
    const connection = await this.connection();
    let timer: NodeJS.Timeout | undefined;
    try {
      const answer = await Promise.race([
        connection.exchange(request),
        new Promise<never>((_resolve, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
        }),
      ]);
      if (answer.closed || request.once || !connection.usable) connection.destroy();
      else this.idle.push(connection);
      return answer;
    } catch (err) {
      connection.destroy();
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  close(): void {
    for (const c of this.idle) c.destroy();
    this.idle = [];
  }
}
