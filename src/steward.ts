import type { Server } from 'node:http';

import { builtinModules } from '../modules/index.js';
import { createApp } from './api/app.js';
import { createAccessControl } from './api/auth/access-control.js';
import { createHttpServer } from './api/http-server.js';
import { loadBodySchemas } from './api/schemas.js';
import { trackConnections } from './api/server-connections.js';
import type { Config } from './config.js';
import { createAuditQueries } from './core/audit/audit-queries.js';
import { createAuditRecorder } from './core/audit/audit-recorder.js';
import { createEventFeed } from './core/events/event-feed.js';
import { newWorkerId } from './core/ids.js';
import type { CoreLogger } from './core/logging.js';
import { loadModulesFromPaths } from './core/modules/module-loader.js';
import { createRegistry } from './core/modules/registry.js';
import { createApplyCommand } from './core/requests/apply-command.js';
import { createIdempotencyKeys } from './core/requests/idempotency-keys.js';
import { resolveLimits, withRequestLimits } from './core/requests/limits.js';
import { createLogReader } from './core/requests/logs.js';
import { createOperationCommands } from './core/requests/operation-commands.js';
import { createQueries } from './core/requests/queries.js';
import { resolveQuotas } from './core/requests/quotas.js';
import { createResourceCommands } from './core/requests/resource-commands.js';
import { createScheduleCommands } from './core/schedules/schedule-commands.js';
import { createScheduler } from './core/schedules/scheduler.js';
import { createResourceSecrets } from './core/secrets/sealed-resources.js';
import { sealingStore } from './core/secrets/sealing-store.js';
import { createSecretBox } from './core/secrets/secret-box.js';
import { createSecretReads } from './core/secrets/secret-reads.js';
import { createSyncEngine } from './core/sync/sync-engine.js';
import type { SyncObserver } from './core/sync/sync-observer.js';
import { createWebhooks } from './core/webhooks/webhooks.js';
import { createPruners } from './housekeeping.js';
import { createLogger } from './logger.js';
import { createMetrics } from './metrics/create-metrics.js';
import { reportSecretsAtRest, warnOpen } from './startup-notices.js';
import { createStore, redactUrl } from './store/create-store.js';
import { deliveryOptionsFrom, engineOptionsFrom, schedulerOptionsFrom } from './worker-options.js';
import type { WorkerProcess } from './worker-process/worker-process.js';

/** How often a watch looks for events committed by other processes (this process's own commits wake it at once). */
const EVENTS_POLL_MS = 500;
export interface StewardOverrides {
  logger?: CoreLogger;
  /** Modules added to the built-in and STEWARD_MODULE_PATHS ones (tests, benchmarks, embedding). */
  extraModules?: Array<{ definition: unknown; origin: string }>;
  clock?: () => Date;
  random?: () => number;
  /** The worker's lease owner id (default: random). */
  workerId?: string;
  /** false: serve only /healthz and /readyz (`steward worker`). @default true */
  serveApi?: boolean;
  /** The worker runs in this process of its own (`serve`'s default with two cores): `start()` and `stop()` start and stop it. */
  workerProcess?: WorkerProcess;
  /**
   * Where the sync engine reports, instead of this Steward's metrics: the worker process forwards to
   * `serve`'s, and then keeps no process metrics (nobody scrapes its registry; their event-loop
   * sampling would wake it ten times a second).
   */
  syncObserver?: SyncObserver;
}

/**
 * The composition root: builds every part from the resolved configuration and
 * wires them together. Nothing listens or syncs until `start()`.
 */
export async function createSteward(config: Readonly<Config>, overrides: StewardOverrides = {}) {
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const clock = overrides.clock ?? (() => new Date());
  // First: a bad tokens file stops start-up with its message, and nothing is opened.
  const access = createAccessControl({
    tokensFile: config.tokensFile,
    rateLimitPerSecond: config.rateLimitPerSecond,
    rateLimitBurst: config.rateLimitBurst,
    now: () => clock().getTime(),
    logger,
    // Requests arrive only after start(), when the recorder below exists.
    recordAudit: (entry) => auditRecorder.record(entry),
  });
  const registry = createRegistry([
    ...(await builtinModules(config)),
    ...(await loadModulesFromPaths(config.modulePaths)),
    ...(overrides.extraModules ?? []),
  ]);
  const box = createSecretBox(config.secretKey, config.secretKeysPrevious);
  const secrets = createResourceSecrets(box, (kind) => registry.find(kind)?.definition);
  const store = await createStore({
    db: config.db,
    busyTimeoutMs: config.dbBusyTimeoutMs,
    poolSize: config.dbPoolSize,
  });
  // What plans, syncs and secret reads use: secrets opened on the way out, sealed on the way in.
  const sealed = sealingStore(store, secrets);
  const limits = resolveLimits(config);
  const commands = withRequestLimits(
    createResourceCommands({
      store: sealed,
      registry,
      clock,
      quotas: resolveQuotas(config),
      operationDeadlineMs: config.operationDeadlineMs,
    }),
    limits,
  );
  const queries = createQueries({ store, registry, maxPageBytes: config.maxPageBytes });
  const schedules = createScheduleCommands({
    store,
    registry,
    clock,
    maxPageBytes: config.maxPageBytes,
  });
  const events = createEventFeed({
    store,
    options: { pollIntervalMs: EVENTS_POLL_MS, batchSize: 500 },
  });
  const idempotency = createIdempotencyKeys({ store, clock });
  const auditRecorder = createAuditRecorder({ store, clock, logger });
  const pruners = createPruners({ store, clock, logger, config, idempotency });
  const metrics = createMetrics({
    logger,
    processMetrics: !overrides.syncObserver,
    sources: {
      store,
      kinds: () => registry.kinds(),
      activeWorkers: () => (workerProcess ? workerProcess.inFlight() : engine.inFlight()),
      maxWorkers: config.worker ? config.workerConcurrency : 0,
      openWatches: () => events.openWatches(),
      clock,
    },
  });
  const workerProcess = overrides.workerProcess;
  workerProcess?.attach({ signals: store, observer: metrics.sync });
  const workerId = overrides.workerId ?? newWorkerId();
  // The scheduler's batched firing reads and commits through the sealing store, as the commands do.
  const batchFiring = { store: sealed, prepared: commands.prepared };
  const scheduler = createScheduler({
    store,
    commands,
    clock,
    logger,
    options: schedulerOptionsFrom(config, workerId),
    authorize: access.makerMayChange,
    batch: batchFiring,
  });
  const webhooks = createWebhooks({
    store,
    box,
    clock,
    logger,
    random: overrides.random,
    wakeDelivery: workerProcess?.wakeDelivery,
    allow: config.webhookAllow,
    maxPageBytes: config.maxPageBytes,
    options: deliveryOptionsFrom(config, workerId),
  });
  const engine = createSyncEngine({
    store: sealed,
    signals: store,
    registry,
    clock,
    logger,
    random: overrides.random,
    observer: overrides.syncObserver ?? metrics.sync,
    options: engineOptionsFrom(config, workerId),
  });
  const app = createApp({
    commands,
    apply: createApplyCommand({ store: sealed, registry, commands }),
    operationCommands: createOperationCommands({ store, clock, queries }),
    schedules,
    webhooks: webhooks.commands,
    queries,
    secrets: createSecretReads({ store: sealed, registry }),
    registry,
    schemas: loadBodySchemas(),
    logger,
    openLogs: createLogReader({ store: sealed, registry }),
    serveApi: overrides.serveApi,
    idempotency,
    access,
    limits,
    audit: createAuditQueries({
      store,
      beforeRead: () => auditRecorder.flush(),
      maxPageBytes: config.maxPageBytes,
    }),
    events: { feed: events, heartbeatMs: config.eventsHeartbeatMs },
    metrics: { endpoint: metrics.endpoint, http: metrics.http },
    readiness: {
      database: () => store.ping(),
      workerRunning: () =>
        config.worker ? (workerProcess ? workerProcess.isRunning() : engine.isRunning()) : null,
    },
  });
  let server: Server | undefined;
  let connections: ReturnType<typeof trackConnections> | undefined;
  let stopping: Promise<void> | undefined;
  /** The worker's loops in this process. */
  const startWorker = () => {
    engine.start();
    scheduler.start();
    webhooks.loop.start();
    pruners.start();
  };

  return {
    config,
    logger,
    registry,
    /** The store as written (secrets sealed); `secrets` opens and seals them. */
    store,
    secrets,
    commands,
    queries,
    engine,
    schedules,
    scheduler,
    /** What the scheduler fires a batch with (core/schedules/firing-batch.ts). */
    batchFiring,
    /** The webhook delivery loop (docs/webhooks.md), started with the worker. */
    webhookDelivery: webhooks.loop,
    events,
    /** The worker's pruners (housekeeping.ts), each with its own `runOnce` for tests. */
    pruner: pruners.events,
    historyPruner: pruners.history,
    idempotency,
    idempotencyPruner: pruners.idempotency,
    auditRecorder,
    auditPruner: pruners.audit,
    deliveryPruner: pruners.delivery,
    metrics,
    app,
    /** The HTTP server, once started. */
    get server(): Server | undefined {
      return server;
    },
    /** Listens on the configured host and port (port 0: any free port), and starts the worker when enabled. */
    async start(): Promise<{ port: number }> {
      const listening = createHttpServer(app, config, logger);
      await new Promise<void>((resolve, reject) => {
        listening.once('error', reject);
        listening.listen(config.port, config.host, () => {
          listening.off('error', reject);
          resolve();
        });
      });
      server = listening;
      connections = trackConnections(server);
      if (config.worker) {
        if (workerProcess) await workerProcess.start();
        else startWorker();
      }
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : config.port;
      // A stop began while the worker process started: nothing to announce.
      if (stopping) return { port };
      logger.info('steward started', {
        host: config.host,
        port,
        maxConnections: listening.maxConnections,
        db: redactUrl(config.db),
        worker: config.worker,
        workerPid: workerProcess?.pid,
        kinds: registry.kinds(),
        access: access.mode,
      });
      if (access.mode === 'open' && overrides.serveApi !== false) warnOpen(logger, config.host);
      reportSecretsAtRest(logger, registry, secrets);
      return { port };
    },
    /** Starts the worker's loops without listening (the worker process `serve` starts, src/worker-process/). */
    startWorker,
    /**
     * Stops taking requests, ends open watches, drains the worker within the grace period, releases
     * leases, closes the database. A second call gets the first one's promise.
     */
    stop(): Promise<void> {
      stopping ??= stopAll();
      return stopping;
    },
  };

  async function stopAll(): Promise<void> {
    // The worker process drains while the API closes; should it fail, the rest still closes.
    const workerStopped = workerProcess?.stop().then(
      () => undefined,
      (err: unknown) => err,
    );
    const closing = server
      ? new Promise<void>((resolve) => server!.close(() => resolve()))
      : Promise.resolve();
    server?.closeIdleConnections();
    await events.close();
    connections?.closeUnused();
    if (!workerProcess) {
      await pruners.stop();
      await scheduler.stop();
      await webhooks.loop.stop();
      await engine.stop();
    }
    const workerFailed = await workerStopped;
    connections?.closeUnused();
    await closing;
    await auditRecorder.stop();
    await store.close();
    logger.info('steward stopped');
    if (workerFailed) throw workerFailed;
  }
}

export type Steward = Awaited<ReturnType<typeof createSteward>>;
