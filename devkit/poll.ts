// Waits for a condition by asking again and again, for code the tests and
// the bench share (a test's own waits use vitest's vi.waitFor / expect.poll,
// which the bench cannot load).
//
//   const { waitedMs } = await poll(() => answersYet(), { what: "Prism answering", timeoutMs: 60_000 });

export interface PollOptions {
  /** Named in the error when time runs out. */
  what: string;
  timeoutMs: number;
  /** Pause between two tries (default 50 ms). */
  intervalMs?: number;
  /** Asked before each try: a reason to give up at once (the process died), or null to go on. */
  abortIf?: () => string | null;
}

/**
 * Calls `probe` until it returns something other than undefined, and
 * resolves with that value and the milliseconds it took. A probe that
 * throws counts as not yet (its message is kept for the time-out's error).
 */
export async function poll<T>(probe: () => Promise<T | undefined>, options: PollOptions): Promise<{ value: T; waitedMs: number }> {
  const started = performance.now();
  let last = "no answer yet";
  for (;;) {
    const abort = options.abortIf?.();
    if (abort != null) throw new Error(`${options.what}: ${abort}`);
    try {
      const value = await probe();
      if (value !== undefined) return { value, waitedMs: performance.now() - started };
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    if (performance.now() - started > options.timeoutMs) throw new Error(`${options.what}: not within ${options.timeoutMs} ms (${last})`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 50));
  }
}

/** Waits until `url` gives any HTTP answer (a 404 too: the server is serving), as Prism's starters do. */
export function untilAnswering(url: string, options: Omit<PollOptions, "intervalMs">, headers: Record<string, string> = {}): Promise<{ value: number; waitedMs: number }> {
  return poll(
    async () => {
      const response = await fetch(url, { headers, signal: AbortSignal.timeout(1_000) });
      await response.body?.cancel();
      return response.status;
    },
    { ...options, intervalMs: 150 },
  );
}
