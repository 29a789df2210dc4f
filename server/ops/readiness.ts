// Whether this instance should receive traffic: its database answers within
// AGENTD_DB_TIMEOUT and, with an external auth service, that service answers
// too. A load balancer may probe many times a second; the dependencies are
// asked at most once per interval whatever the probe rate, and every probe in
// between gets the last answer.

export interface DependencyCheck {
  /** Named in the /readyz body, e.g. "database". */
  name: string;
  /** Resolves when the dependency answered; rejects (or times out) when it did not. */
  check: () => Promise<void>;
}

export interface ReadinessReport {
  ready: boolean;
  body: { status: "ready" | "not ready" | "draining"; checks?: Record<string, string> };
}

export interface ReadinessOptions {
  timeoutMs: number;
  /** The shortest time between two rounds of checks. */
  intervalMs?: number;
  now?: () => number;
}

export class Readiness {
  private draining = false;
  private last: { at: number; report: Promise<ReadinessReport> } | null = null;
  private readonly intervalMs: number;
  private readonly now: () => number;

  constructor(
    private readonly checks: readonly DependencyCheck[],
    private readonly options: ReadinessOptions,
  ) {
    this.intervalMs = options.intervalMs ?? 1000;
    this.now = options.now ?? (() => performance.now());
  }

  /** From now on, /readyz answers 503 "draining": the instance is stopping. */
  drain(): void {
    this.draining = true;
  }

  report(): Promise<ReadinessReport> {
    if (this.draining) return Promise.resolve({ ready: false, body: { status: "draining" } });
    const now = this.now();
    if (this.last === null || now - this.last.at >= this.intervalMs) {
      this.last = { at: now, report: this.checkAll() };
    }
    return this.last.report;
  }

  private async checkAll(): Promise<ReadinessReport> {
    const results = await Promise.all(
      this.checks.map(async ({ name, check }) => [name, await outcome(check, this.options.timeoutMs)] as const),
    );
    const ready = results.every(([, result]) => result === "ok");
    return { ready, body: { status: ready ? "ready" : "not ready", checks: Object.fromEntries(results) } };
  }
}

async function outcome(check: () => Promise<void>, timeoutMs: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs);
  });
  try {
    return await Promise.race([
      check().then(
        () => "ok",
        (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : "failed"),
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
