// Lets the stateful mock's reset run alone: the requests under way finish
// first, and the ones that come meanwhile wait for it. Without it a pause
// that committed between the reset's steps would keep its new state and
// lose its event, or the other way round.
//
// A request counts until its response closes: answered, or its client gone.
// A client that leaves mid-request could thus let a reset start beside its
// handler; the service's clients are Prism's proxy, which never gives up
// on a request, and the front door's direct route, which carries only
// requests the service refuses before any handler (front-door.ts).
import type { RequestHandler } from "express";

export interface RequestGate {
  /** Counts each request until its response closes; holds it first while `alone` runs. */
  middleware: RequestHandler;
  /** Runs `work` once no request is under way, holding new ones until it ends; one at a time. */
  alone(work: () => Promise<void>): Promise<void>;
}

export function createRequestGate(): RequestGate {
  let underWay = 0;
  let idle: (() => void) | null = null;
  let closed: Promise<void> | null = null;

  return {
    middleware: (_req, res, next) => {
      let admitted = false;
      let gone = false;
      // Listened to at once: a client that leaves while its request is held
      // must not be counted in later, with no close left to count it out.
      res.once("close", () => {
        gone = true;
        if (!admitted) return;
        underWay--;
        if (underWay === 0) idle?.();
      });
      const admit = (): void => {
        if (gone) return;
        if (closed !== null) {
          void closed.then(admit);
          return;
        }
        admitted = true;
        underWay++;
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
