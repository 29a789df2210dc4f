import https from "node:https";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import { adminSocketPath, startAdminChannel, type AdminChannel } from "./admin/channel.js";
import { lockDataDir, type DataDirLock } from "./admin/lock.js";
import { runAdmin } from "./admin/run-admin.js";
import type { CheckBudget, TokenVerifier } from "./auth/verifier.js";
import type { Config } from "./config/config.js";
import { BASE_PATH, CONTRACT } from "./contract.js";
import { burstyLimiter } from "./http/bursty-limiter.js";
import { connectionCap, limitConnections, openFileLimit } from "./http/connection-limits.js";
import { startOpsListener, type OpsListener } from "./ops/listener.js";
import { readBuildInfo } from "./ops/build-info.js";
import { NO_METRICS } from "./ops/metrics.js";
import { createMetrics, registerEventMetrics, type PrometheusMetrics } from "./ops/prometheus.js";
import { Readiness, type DependencyCheck } from "./ops/readiness.js";
import { openStores, type Stores } from "./stores.js";
import { agentStoreWhenOpen, embeddedVerifierWhenOpen } from "./stores-when-open.js";
import type { PgliteThread } from "./db/threaded-pglite.js";
import { startDelivery } from "./events/delivery.js";
import { sinkNames } from "./events/sink.js";
import type { Relay } from "./events/relay.js";
import { loadOrCreateCertificate, tlsServerOptions } from "./tls/certificate.js";
import { PathFailure } from "./failure.js";
import { hostPort } from "./host-port.js";
import { responseHeaders } from "./http/response-headers.js";
import { gracefulStop } from "./http/graceful-stop.js";

export interface RunningServer {
  /** e.g. https://127.0.0.1:9493/1.0 */
  url: string;
  port: number;
  certPath: string;
  fingerprint256: string;
  /** Why clients refuse the certificate now (expired, not yet valid: see CertificateMaterial.validityProblem), or null. */
  certificateProblem: string | null;
  /** Set on the first start of an embedded deployment: shown once, never stored. */
  adminToken: string | null;
  /** The operator listener (http://host:port, serving /healthz, /readyz, /metrics); null when AGENTD_OPS_PORT is off. */
  opsUrl: string | null;
  /** The metrics this instance exposes, for other parts (logging, events) to add their own; null when off. */
  metrics: PrometheusMetrics | null;
  /**
   * Stops: /readyz turns 503 at once, the API keeps serving for
   * AGENTD_DRAIN_DELAY, then stops accepting, lets in-flight requests finish
   * and closes the database.
   */
  close(): Promise<void>;
}

/**
 * Starts the service: takes the data directory (embedded database only),
 * reads the certificate, opens and migrates the database, makes sure
 * AGENTD_ADMIN_TOKEN exists, sets the request path up (the warm-up), and
 * listens on HTTPS. Nothing listens until all of that succeeded; the first
 * admin token of a new deployment is made only once it listens.
 *
 * The embedded database opens in a thread of its own while this one loads
 * the HTTP stack (Express, the validator) and warms it up: on two cores, the
 * two overlap. `pgliteThread` is that thread when the caller started it
 * earlier still (the serve command does, before it loads this module).
 */
export async function startServer(config: Config, logger: Logger, pgliteThread?: PgliteThread): Promise<RunningServer> {
  // A cap that leaves too few descriptors is a configuration error: refused
  // before anything is locked, opened or loaded.
  const connectionLimit = connectionCap(config.maxConnections, openFileLimit());
  const embedded = config.databaseUrl === null;
  const lock: DataDirLock | null = embedded ? await lockDataDir(config.dataDir) : null;
  // Before the database is opened: a start that cannot serve (a typo in
  // AGENTD_TLS_CERT, an unreadable key) must not migrate or write it first.
  const certificate = await loadOrCreateCertificate({
    dataDir: config.dataDir,
    certPath: config.tlsCert,
    keyPath: config.tlsKey,
  }).catch(async (err: unknown) => {
    await lock?.release();
    throw err;
  });
  if (certificate.validityProblem !== null) {
    logger.warn({ certPath: certificate.certPath }, certificate.validityProblem);
  }
  // What a failed start has opened so far, for the catch below to close.
  let stores: Stores | undefined;
  let server: https.Server | null = null;
  let ops: OpsListener | null = null;
  let admin: AdminChannel | null = null;
  let verifier: TokenVerifier | null = null;
  const sinks = sinkNames(config.events);
  const metrics = config.opsPort === null ? null : createMetrics(readBuildInfo());
  let relay: Relay | null = null;
  const opening = openStores(config, logger, {
    metrics: metrics ?? NO_METRICS,
    events: { sinks, recorded: () => relay?.wake() },
    pgliteThread,
    upgradeSchema: true,
  });
  // Its failure is thrown below, once the app is warm; until then it must
  // not count as unhandled, which would end the process.
  opening.catch(() => undefined);
  try {
    // Loaded only when configured: its HTTP client (undici) is slow to load.
    const external = config.authUrl
      ? new (await import("./auth/external.js")).ExternalVerifier({
          url: config.authUrl,
          timeoutMs: config.authTimeoutMs,
          cacheTtlMs: config.authCacheTtlMs,
          cacheSize: config.authCacheSize,
          log: logger,
          ...(metrics ? { onCacheHit: () => metrics.authCacheHit() } : {}),
          ...(config.authCheckLimit ? { checkBudget: checkBudget(config.authCheckLimit) } : {}),
        })
      : null;
    const tokenVerifier = external ?? embeddedVerifierWhenOpen(opening);
    verifier = tokenVerifier;
    // The app is built and the validator set up for every operation while
    // the database opens: before the port opens, so the first clients find
    // it ready, and beside the database's start, not after it.
    const [openedStores, warmedUp] = await Promise.allSettled([
      opening,
      loadHttpStack().then(async ({ createApp, answerClientErrors, handleExpectations, warmUp }) => {
        const app = createApp({ config, store: agentStoreWhenOpen(opening), verifier: tokenVerifier, logger, metrics: metrics ?? NO_METRICS });
        await warmUp(app, CONTRACT, BASE_PATH);
        return { app, answerClientErrors, handleExpectations };
      }),
    ]);
    if (openedStores.status === "fulfilled") stores = openedStores.value;
    else throw openedStores.reason;
    if (warmedUp.status === "rejected") throw warmedUp.reason;
    const { app, answerClientErrors, handleExpectations } = warmedUp.value;

    relay = await startDelivery(config.events, stores.db, logger, metrics ? (backlog, kinds) => registerEventMetrics(metrics, backlog, kinds) : null);
    await ensureConfiguredAdminToken(config, stores, logger);
    if (config.adminToken && config.authUrl) {
      logger.warn(
        "AGENTD_ADMIN_TOKEN is stored but not used while AGENTD_AUTH_URL is set: every token, that one included, is checked with the authentication service",
      );
    }

    const opened = stores;
    const checks: DependencyCheck[] = [{ name: "database", check: async () => void (await opened.db.query("SELECT 1")) }];
    if (external !== null) checks.push({ name: "auth", check: () => external.probe() });
    const readiness = new Readiness(checks, { timeoutMs: config.dbTimeoutMs });
    // The admin socket and the operator listener start before the API
    // listens, so a failure of either leaves nothing half-started.
    if (embedded) {
      admin = await startAdminChannel(adminSocketPath(config.dataDir), (request) => runAdmin(request, { ...opened, configuredSinks: sinks, authUrl: config.authUrl }), logger);
    }
    const opsPort = config.opsPort;
    if (metrics !== null && opsPort !== null) {
      ops = await startOpsListener(config.opsHost, opsPort, { readiness, registry: metrics.registry }).catch((err: unknown) => {
        throw new PathFailure("listen on", `${hostPort(config.opsHost, opsPort)} (AGENTD_OPS_HOST, AGENTD_OPS_PORT)`, err);
      });
    }

    // The app answers a missing Host itself, with the contract's Error body.
    const listening = https.createServer(
      {
        ...tlsServerOptions(certificate),
        requireHostHeader: false,
        // Node's default is 120 s: that long, a silent connection holds a
        // file descriptor, and enough of them lock every client out.
        handshakeTimeout: config.tlsHandshakeTimeoutMs,
      },
      app,
    );
    server = listening;
    const stopping = gracefulStop(listening, logger);
    // Bounded waits, so a slow or stalled client cannot hold a connection forever.
    server.headersTimeout = 10_000;
    server.requestTimeout = 30_000;
    // Node keeps only the first 2,000 header lines by default, yet frames the
    // body by the rest: a Content-Length after them had its body read and
    // ignored (a pause answered 204 without its reason). The header size
    // limit bounds their number instead.
    server.maxHeadersCount = 0;
    limitConnections(server, { idleTimeoutMs: config.idleTimeoutMs, cap: connectionLimit });
    server.on("tlsClientError", (err) => logger.debug({ err: err.message }, "TLS handshake failed"));
    answerClientErrors(server, responseHeaders(config));
    handleExpectations(server, config.bodyLimitBytes);

    await new Promise<void>((resolve, reject) => {
      // Named with its variables: an unknown host or a port in use says which setting to change.
      const failed = (err: Error) => reject(new PathFailure("listen on", `${hostPort(config.host, config.port)} (AGENTD_HOST, AGENTD_PORT)`, err));
      listening.once("error", failed);
      listening.listen(config.port, config.host, () => {
        listening.off("error", failed);
        resolve();
      });
    });
    const { port } = listening.address() as AddressInfo;
    // Only once the port is open: a start that failed before would have
    // made a token that was never shown, and no later start shows it.
    const adminToken = await firstAdminToken(config, stores, logger);

    let closing: Promise<void> | undefined;
    return {
      url: `https://${hostPort(config.host, port)}${BASE_PATH}`,
      port,
      certPath: certificate.certPath,
      fingerprint256: certificate.fingerprint256,
      certificateProblem: certificate.validityProblem,
      adminToken,
      opsUrl: ops?.url ?? null,
      metrics,
      close() {
        closing ??= (async () => {
          // Load balancers see the instance leave before its connections are refused.
          readiness.drain();
          if (config.drainDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, config.drainDelayMs));
          await admin?.close();
          await stopping.stop(config.shutdownTimeoutMs);
          await tokenVerifier.close?.();
          await relay?.stop();
          await opened.db.close();
          await ops?.close();
          await lock?.release();
        })();
        return closing;
      },
    };
  } catch (err) {
    if (server?.listening) {
      server.closeAllConnections();
      await new Promise((resolve) => server?.close(resolve));
    }
    await admin?.close();
    await ops?.close();
    await verifier?.close?.();
    await relay?.stop().catch(() => undefined);
    // A failure while the stores were still opening: they are closed once
    // open, before the lock is released.
    stores ??= await opening.catch(() => undefined);
    await stores?.db.close().catch(() => undefined);
    await lock?.release();
    throw err;
  }
}

/** What AGENTD_ADMIN_TOKEN and the first admin token grant: every operation. */
const ADMIN_ACLS = ["agentd.#"];

/** Two budgets for the whole instance (CheckBudget): they protect the auth service, not a client. */
function checkBudget({ perSecond, burst }: { perSecond: number; burst: number }): CheckBudget {
  const limiter = burstyLimiter("auth-checks", perSecond, burst);
  return (of) => limiter.take(of);
}

/** The modules that serve HTTP requests, loaded while the database opens. */
async function loadHttpStack() {
  const [{ createApp }, { answerClientErrors }, { handleExpectations }, { warmUp }] = await Promise.all([
    import("./http/app.js"),
    import("./http/parser-errors.js"),
    import("./http/expectations.js"),
    import("./http/warm-up.js"),
  ]);
  return { createApp, answerClientErrors, handleExpectations, warmUp };
}

/**
 * Makes sure AGENTD_ADMIN_TOKEN exists when it is set, before the port
 * opens, so it works from the first request; a new value revokes the token
 * of the previous one (the token store's ensure), which the log records.
 */
async function ensureConfiguredAdminToken(config: Config, stores: Stores, logger: Logger): Promise<void> {
  if (!config.adminToken) return;
  const { revokedIds } = await stores.tokens.ensure(config.adminToken, ADMIN_ACLS);
  if (revokedIds.length > 0) logger.warn({ revokedTokenIds: revokedIds }, "AGENTD_ADMIN_TOKEN has a new value: the previous value's token is revoked");
}

/**
 * Creates the first admin token of a deployment that never had a token,
 * with no AGENTD_ADMIN_TOKEN or auth service, returned so it can be printed
 * once (to the terminal, not the log: the log gets its id). A deployment
 * whose tokens were all revoked gets none: that is a lock-down, and the log
 * says how to make one.
 */
async function firstAdminToken(config: Config, stores: Stores, logger: Logger): Promise<string | null> {
  if (config.adminToken || config.authUrl) return null;
  const first = await stores.tokens.createFirst(ADMIN_ACLS);
  if (first !== null) {
    logger.info({ tokenId: first.id, acls: ADMIN_ACLS }, "first admin token created, shown once on standard error");
    return first.token;
  }
  const now = Date.now();
  if ((await stores.tokens.list()).every((token) => token.expiresAt !== null && token.expiresAt.getTime() <= now)) {
    logger.warn("no token is left that has not expired or been revoked: every request is refused 401 until one is made with `agentd token create`");
  }
  return null;
}
