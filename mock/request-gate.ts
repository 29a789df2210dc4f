// Lets the stateful mock's reset run alone: the requests under way finish
// first, and the ones that come meanwhile wait for it. Without it a pause
// that committed between the reset's steps would keep its new state and
// lose its event, or the other way round.
import type { RequestHandler } from "express";

export interface RequestGate {
  /** Counts each request until its answer is done; holds it first while `alone` runs. */
  middleware: RequestHandler;
  /** Runs `work` once no request is under way, holding new ones until it ends; one at a time. */
  alone(work: () => Promise<void>): Promise<void>;
}

export function createRequestGate(): RequestGate {
  let underWay = 0;
  let idle: (() => void) | null = null;
  let closed: Promise<void> | null = null;

  const finished = (): void => {
    underWay--;
    if (underWay === 0) idle?.();
  };

  return {
    middleware: (req, res, next) => {
      const admit = (): void => {
        if (closed !== null) {
          void closed.then(admit);
          return;
        }
        underWay++;
        res.once("close", finished);
        next();
      };
      admit();
    },
    async alone(work) {
      while (closed !== null) await closed;
      let open!: () => void;
      closed = new Promise((resolve) => (open = resolve));
      try {
        if (underWay > 0) await new Promise<void>((resolve) => (idle = resolve));
        idle = null;
        await work();
      } finally {
        const opening = open;
        closed = null;
        opening();
      }
    },
  };
}
