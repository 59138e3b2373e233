/**
 * The one launcher of a local ferry server, used by `ferry serve` (and so
 * `npm start`), the Node tests' global setup and the benchmarks: the Worker
 * bundled once with esbuild and run on workerd, with a config ferry writes
 * itself (runtime-config.ts), Durable Object SQLite persisted under a data
 * directory, and wrangler.toml's R2 buckets as local ones beside it
 * (local-r2.ts) unless asked to run without. Clients reach one TCP port,
 * this process's front door (front-door.ts), which passes each connection to
 * workerd's one socket, a Unix socket in a directory only this user can
 * open: no loopback server of a tool's own, no inspector unless asked for
 * (README "The local server" says why).
 *
 * esbuild is imported lazily so that loading the CLI for any other command
 * does not load it.
 */
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { RETENTION_VARS } from "../../protocol/retention.ts";
import { DEV_SECRET } from "../../protocol/token.ts";
import { isLoopbackHost } from "../common/loopback.ts";
import {
  adoptWranglerState,
  DEFAULT_DATA_DIR,
  makePrivate,
  objectsRoot,
  r2Root,
  syncedFolderHolding,
} from "./data-dir.ts";
import { DataInUseError, DataLock } from "./data-lock.ts";
import { type FrontDoor, openFrontDoor } from "./front-door.ts";
import { localR2Config } from "./local-r2.ts";
import { METER_ENV, METER_MODULE, objectMeterSource } from "./object-meter.ts";
import { LOGGER_MODULE, REQUEST_LOG_SOURCE, runtimeConfig, SECRET_ENV, WORKER_MODULE } from "./runtime-config.ts";
import { makeRuntimeHome } from "./runtime-home.ts";
import { pipeRuntimeOutput } from "./runtime-log.ts";
import { type Runtime, startRuntime } from "./runtime-process.ts";
import { LocalServerError, refuseWeakSecret, startError } from "./start-refusals.ts";
import { bundleWorker, findWorkerSource } from "./worker-source.ts";

export { LocalServerError } from "./start-refusals.ts";

export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 8787;

export interface LocalServerOptions {
  /** Where the objects' SQLite files live (created if missing). */
  readonly dataDir: string;
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port?: number;
  /** Token secret; defaults to FERRY_SECRET, else the documented development secret. */
  readonly secret?: string;
  /** Worker variables over wrangler.toml's `[vars]` (the secret and FERRY_STORAGE are set apart). */
  readonly vars?: Readonly<Record<string, string>>;
  /** Log one line per request. */
  readonly verbose?: boolean;
  /** A DevTools inspector port for the Worker's isolate (bench/lib/isolate-heap.ts reads its heap). */
  readonly inspectorPort?: number;
  /**
   * Bind wrangler.toml's R2 buckets, persisted under `<dataDir>/r2` (the
   * default); false runs as a deploy without them: pack bytes in SQLite.
   */
  readonly r2?: boolean;
  /**
   * Copy in the workspaces of `<this directory>/.wrangler/state` when the data
   * directory holds none (data-dir.ts adoptWranglerState): `ferry serve`'s
   * default data directory. Done under the data directory's lock.
   */
  readonly adoptWranglerStateOf?: string;
}

/** Where the Worker keeps object bytes, as /v1/health reports it: R2 packs when a bucket is bound. */
export type PacksMode = "r2" | "sqlite";

export interface LocalServer {
  readonly url: string;
  /** Absolute. */
  readonly dataDir: string;
  readonly secret: string;
  readonly packs: PacksMode;
  /** Workspaces copied in from `.wrangler/state` at this start (adoptWranglerStateOf). */
  readonly adopted: number;
  /** The workerd process serving requests now (another one after a restart). */
  runtimePid(): number;
  /** Settles if workerd died and could not be started again: the server no longer serves. */
  readonly failed: Promise<Error>;
  /**
   * Stops the server. With `graceMs`, workerd first stops accepting and
   * finishes the requests in flight (its own drain on SIGTERM), for at most
   * that long; then it is killed.
   */
  stop(graceMs?: number): Promise<void>;
}

export async function startLocalServer(options: LocalServerOptions): Promise<LocalServer> {
  const dataDir = resolve(options.dataDir);
  const { host, secret, loopback } = settingsOf(options);
  if (!loopback) refuseWeakSecret(host, secret);
  const synced = syncedFolderHolding(dataDir);
  if (synced !== null) {
    throw new LocalServerError(
      "data_in_synced_folder",
      `${dataDir} is inside the synced folder ${synced}: its files would be synced, and each push would ` +
        `write more; choose a --data outside it, or one named ${DEFAULT_DATA_DIR} (never synced)`,
    );
  }
  makePrivate(dataDir);
  let lock: DataLock;
  try {
    lock = DataLock.take(dataDir);
  } catch (e) {
    if (e instanceof DataInUseError) throw new LocalServerError(e.code, e.message);
    throw e;
  }
  try {
    return await startLocked(options, dataDir, lock);
  } catch (e) {
    lock.release();
    throw e;
  }
}

/** The rest of startLocalServer, with the data directory's lock held (released by `stop`). */
async function startLocked(options: LocalServerOptions, dataDir: string, lock: DataLock): Promise<LocalServer> {
  const { host, secret, port, loopback } = settingsOf(options);
  const verbose = options.verbose === true;
  const source = findWorkerSource();
  const adopted =
    options.adoptWranglerStateOf === undefined ? 0 : adoptWranglerState(dataDir, source, options.adoptWranglerStateOf);
  const script = await bundleWorker(source);
  mkdirSync(objectsRoot(dataDir), { recursive: true });
  // bench/lib/object-cpu.ts asks for the object's busy spans (object-meter.ts) through the environment.
  const meter = process.env[METER_ENV] === "1";
  const r2 =
    options.r2 === false || source.r2Buckets.length === 0
      ? undefined
      : localR2Config({ root: r2Root(dataDir), buckets: source.r2Buckets });
  if (r2 !== undefined) mkdirSync(r2Root(dataDir), { recursive: true });
  const config = runtimeConfig({
    source,
    objectsRoot: objectsRoot(dataDir),
    // wrangler.toml's [vars], then retention settings from the environment, then the caller's (ferry serve --var).
    // The storage path goes to /v1/health (for an operator's token) only when no other machine can ask.
    vars: { ...source.vars, ...retentionVars(), ...options.vars, ...(loopback ? { FERRY_STORAGE: dataDir } : {}) },
    verbose,
    ...(r2 === undefined ? {} : { r2 }),
    meter,
  });
  // workerd's socket, in a directory only this user can open (runtime-home.ts).
  const runtimeHome = makeRuntimeHome();
  const runtimeSocket = runtimeHome.socket;
  let door: FrontDoor;
  try {
    door = await openFrontDoor(host, port, runtimeSocket);
  } catch (e) {
    runtimeHome.remove();
    throw startError(e, host, port);
  }
  const start = () => {
    runtimeHome.ready();
    return startRuntime({
      files: {
        "config.capnp": config,
        [WORKER_MODULE]: script,
        [LOGGER_MODULE]: REQUEST_LOG_SOURCE,
        ...(meter
          ? {
              [METER_MODULE]: objectMeterSource(
                WORKER_MODULE,
                source.durableObjects.map((d) => d.className),
              ),
            }
          : {}),
        ...r2?.files,
      },
      address: `unix:${runtimeSocket}`,
      env: { [SECRET_ENV]: secret },
      experimental: r2 !== undefined,
      ...(options.inspectorPort === undefined ? {} : { inspectorAddress: `${DEFAULT_HOST}:${options.inspectorPort}` }),
      pipeOutput: pipeRuntimeOutput(verbose),
    });
  };
  const close = () => {
    door.drop();
    runtimeHome.remove();
  };
  let runtime: Runtime;
  try {
    runtime = await start();
  } catch (e) {
    door.stopAccepting();
    close();
    throw startError(e, host, port);
  }
  const url = `http://${addressOf(host === "0.0.0.0" || host === "::" ? DEFAULT_HOST : host, door.port)}`;
  lock.listening(url);
  let stopping: Promise<void> | undefined;
  let settleFailed: (e: Error) => void = () => undefined;
  const failed = new Promise<Error>((done) => {
    settleFailed = done;
  });
  // The runtime is gone for good: the door stops taking connections it can only drop, and the data directory is
  // free again. Without this the open listener kept the process alive after `ferry serve` reported the failure,
  // holding the port and the lock, while its signal handlers had already been used up.
  const failure = (e: Error): void => {
    if (stopping === undefined) {
      door.stopAccepting();
      stopping = Promise.resolve().then(() => {
        close();
        lock.release();
      });
    }
    settleFailed(e);
  };
  // workerd died (a crash, an OOM kill): start another on the same address, as often as it keeps running a while.
  const watch = (current: Runtime, startedAt: number): void => {
    void current.exited.then(async () => {
      if (stopping !== undefined) return;
      if (Date.now() - startedAt < RESTART_WINDOW_MS) {
        failure(new Error("the Workers runtime exited again right after a restart"));
        return;
      }
      process.stderr.write("ferry serve: the Workers runtime exited; starting it again\n");
      try {
        runtime = await start();
        if (stopping !== undefined) await runtime.stop(0);
        else watch(runtime, Date.now());
      } catch (e) {
        failure(e as Error);
      }
    });
  };
  watch(runtime, 0);
  return {
    url,
    dataDir,
    secret,
    packs: r2 === undefined ? "sqlite" : "r2",
    adopted,
    failed,
    runtimePid: () => runtime.pid,
    stop(graceMs = 0) {
      if (stopping === undefined) {
        // New connections are refused at once; those open get the runtime's drain, then are ended.
        door.stopAccepting();
        stopping = runtime.stop(graceMs).finally(() => {
          close();
          lock.release();
        });
      }
      return stopping;
    },
  };
}

/** The options' defaults filled in. */
function settingsOf(options: LocalServerOptions) {
  const host = options.host ?? DEFAULT_HOST;
  const secret = options.secret ?? (process.env.FERRY_SECRET || DEV_SECRET);
  return { host, secret, port: options.port ?? DEFAULT_PORT, loopback: isLoopbackHost(host) };
}

/** A runtime that dies sooner than this after a restart is not restarted again: something is wrong for good. */
const RESTART_WINDOW_MS = 5000;

/** workerd's address syntax: an IPv6 host in brackets. */
function addressOf(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * The retention variables (worker/sync/retention.ts, README "Retention") set
 * in this process's environment, passed to the Worker as wrangler.toml's
 * `[vars]` would be; unset ones keep the Worker's defaults.
 */
function retentionVars(): Record<string, string> {
  return Object.fromEntries(
    Object.values(RETENTION_VARS).flatMap((n) => (process.env[n] ? [[n, process.env[n] as string]] : [])),
  );
}
