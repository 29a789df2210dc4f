// The slice of autocannon 9's programmatic API the bench and the tests use (it ships no types).
declare module "autocannon" {
  import type { EventEmitter } from "node:events";
  import type { ConnectionOptions } from "node:tls";

  export interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    pipelining?: number;
    duration?: number;
    /** Stop after this many requests instead of after `duration`. */
    amount?: number;
    timeout?: number;
    tlsOptions?: ConnectionOptions;
    /** Sent in turn by each connection, instead of method, headers and body. */
    requests?: Request[];
    /** Called with each connection's client before it sends. */
    setupClient?: (client: Client) => void;
  }
  export interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  }
  export interface Client extends EventEmitter {
    setRequests(requests: Request[]): void;
  }
  export interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    "2xx": number;
    "4xx": number;
    requests: { total: number; average: number; sent: number };
    latency: { p50: number; p99: number };
    statusCodeStats?: Record<string, { count: number }>;
  }
  export interface Instance extends EventEmitter {
    stop(): void;
  }
  function autocannon(options: Options, callback: (err: Error | null, result: Result) => void): Instance;
  export default autocannon;
}
