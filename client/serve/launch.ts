/**
 * The one launcher of a local ferry server, used by `ferry serve` (and so
 * `npm start`), the Node tests' global setup and the benchmarks: the Worker
 * bundled once with esbuild and run on Miniflare's programmatic API, Durable
 * Object SQLite persisted under a data directory. Clients talk to workerd's own
 * socket, straight to our Worker (listenOn); no proxy process stands in front of it.
 *
 * miniflare and esbuild are imported lazily so that loading the CLI for any
 * other command does not load them.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { DEV_SECRET } from "../../protocol/token.ts";
import { objectsRoot } from "./data-dir.ts";
import { pipeRuntimeOutput } from "./runtime-log.ts";
import { bundleWorker, findWorkerSource, WORKER_NAME, WORKSPACE_BINDING } from "./worker-source.ts";

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
}

export interface LocalServer {
  readonly url: string;
  /** Absolute. */
  readonly dataDir: string;
  readonly secret: string;
  /** The workerd process serving requests, when it can be found (Linux). */
  runtimePid(): number | undefined;
  /**
   * Stops the server. With `graceMs`, workerd first stops accepting and
   * finishes the requests in flight (its own drain on SIGTERM), for at most
   * that long; then everything is torn down.
   */
  stop(graceMs?: number): Promise<void>;
}

/** A failure to start, with a stable code: `port_in_use`, or `start_failed` with the cause. */
export class LocalServerError extends Error {
  constructor(
    readonly code: "port_in_use" | "start_failed",
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "LocalServerError";
  }
}

export async function startLocalServer(options: LocalServerOptions): Promise<LocalServer> {
  const dataDir = resolve(options.dataDir);
  const secret = options.secret ?? (process.env.FERRY_SECRET || DEV_SECRET);
  const host = options.host ?? DEFAULT_HOST;
  const source = findWorkerSource();
  const [script, { Miniflare, Log, LogLevel }] = await Promise.all([bundleWorker(source), import("miniflare")]);
  tieRuntimeToThisProcess();
  const childrenBefore = new Set(workerdChildren().map((c) => c.pid));
  const mf = new Miniflare({
    name: WORKER_NAME,
    // The path only names the module (relative to modulesRoot); the code is in `contents`.
    modules: [{ type: "ESModule", path: join(source.root, "ferry-worker.mjs"), contents: script }],
    modulesRoot: source.root,
    compatibilityDate: source.compatibilityDate,
    compatibilityFlags: source.compatibilityFlags,
    durableObjects: { [WORKSPACE_BINDING.name]: { className: WORKSPACE_BINDING.className, useSQLite: true } },
    durableObjectsPersist: objectsRoot(dataDir),
    // wrangler.toml's [vars], then retention settings from the environment, then the caller's (ferry serve --var).
    bindings: { ...source.vars, ...retentionVars(), ...options.vars, FERRY_SECRET: secret, FERRY_STORAGE: dataDir },
    ...listenOn(host, options.port ?? DEFAULT_PORT, options.verbose === true),
    ...(options.inspectorPort === undefined ? {} : { inspectorPort: options.inspectorPort }),
    // Request lines only when asked: each one is a round trip from workerd back to this process.
    logRequests: options.verbose === true,
    // Miniflare's lines (--verbose's request lines among them) go to stderr: stdout carries only what
    // `ferry serve` prints for its caller, the banner or --json's one line, which a script reads first.
    log: new (class extends Log {
      protected override log(message: string): void {
        process.stderr.write(`${message}\n`);
      }
    })(options.verbose ? LogLevel.INFO : LogLevel.WARN),
    handleRuntimeStdio: pipeRuntimeOutput(options.verbose === true),
    // The request.cf object is fetched from the network by default; ferry never reads it.
    cf: false,
  });
  let url: URL;
  try {
    url = await mf.ready;
    if (options.verbose !== true) url = await mf.unsafeGetDirectURL();
  } catch (e) {
    await mf.dispose().catch(() => undefined);
    throw startError(e, host, options.port ?? DEFAULT_PORT);
  }
  // Miniflare restarts workerd if it crashes, on the same loopback address: that argument names our runtime.
  const loopbackArg = workerdChildren().find((c) => !childrenBefore.has(c.pid))?.loopbackArg;
  const runtimePid = () =>
    loopbackArg === undefined ? undefined : workerdChildren().find((c) => c.loopbackArg === loopbackArg)?.pid;
  let stopped: Promise<void> | undefined;
  return {
    url: url.origin,
    dataDir,
    secret,
    runtimePid,
    stop(graceMs = 0) {
      stopped ??= (async () => {
        const pid = runtimePid();
        if (graceMs > 0 && pid !== undefined) await drain(pid, graceMs);
        await mf.dispose();
      })();
      return stopped;
    },
  };
}

/**
 * Where clients connect. Miniflare's entry socket runs its own Worker in
 * front of ours (request.cf, URL rewriting, pretty error pages, --verbose's
 * request lines), which relays every request and answer: ~0.8 ms of the
 * runtime's CPU per request at load 15, a third of a small request's
 * (BENCHMARKS.md section 18). Without --verbose, clients get a direct socket
 * on our Worker instead, and the entry socket listens on a loopback port
 * nobody is told. ferry reads none of what the entry Worker adds.
 */
function listenOn(host: string, port: number, verbose: boolean) {
  return verbose ? { host, port } : { host: DEFAULT_HOST, port: 0, unsafeDirectSockets: [{ host, port }] };
}

/**
 * Miniflare starts workerd as a plain child: if this process is killed
 * outright (SIGKILL, an OOM kill, a test runner's teardown), workerd lives on,
 * holding the port and the SQLite files, and the next `ferry serve` meets
 * port_in_use. On Linux, util-linux's `setpriv --pdeathsig` makes the kernel
 * kill workerd when its parent dies; Miniflare takes the runtime's path from
 * MINIFLARE_WORKERD_PATH, so a two-line wrapper puts it in between (it execs:
 * workerd keeps its pid and its name). Elsewhere, or without setpriv, nothing
 * changes. A path set by the user is left alone.
 */
function tieRuntimeToThisProcess(): void {
  if (process.platform !== "linux" || process.env.MINIFLARE_WORKERD_PATH) return;
  if (spawnSync("setpriv", ["--version"], { stdio: "ignore" }).status !== 0) return;
  // workerd is miniflare's dependency: resolve it from there, wherever npm put it.
  const fromMiniflare = createRequire(createRequire(import.meta.url).resolve("miniflare"));
  const workerd = fromMiniflare("workerd").default as string;
  const quoted = `'${workerd.replaceAll("'", "'\\''")}'`;
  const script = `#!/bin/sh\nexec setpriv --pdeathsig KILL ${quoted} "$@"\n`;
  // One wrapper per user and runtime, written once (atomically: servers may start side by side).
  const dir = join(tmpdir(), `ferry-runtime-${process.getuid?.() ?? "user"}`);
  const wrapper = join(dir, `workerd-${createHash("sha256").update(workerd).digest("hex").slice(0, 12)}`);
  if (readIfExists(wrapper) !== script) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const temp = `${wrapper}.${process.pid}`;
    writeFileSync(temp, script, { mode: 0o755 });
    renameSync(temp, wrapper);
  }
  process.env.MINIFLARE_WORKERD_PATH = wrapper;
}

/**
 * The retention variables (worker/sync/retention.ts, README "Retention") set
 * in this process's environment, passed to the Worker as wrangler.toml's
 * `[vars]` would be; unset ones keep the Worker's defaults.
 */
function retentionVars(): Record<string, string> {
  const names = ["FERRY_HISTORY", "FERRY_UPLOAD_GRACE", "FERRY_TOMBSTONE_HORIZON"];
  return Object.fromEntries(names.flatMap((n) => (process.env[n] ? [[n, process.env[n] as string]] : [])));
}

function startError(e: unknown, host: string, port: number): LocalServerError {
  const code = (e as { code?: unknown }).code;
  if (code === "ERR_ADDRESS_IN_USE") {
    return new LocalServerError(
      "port_in_use",
      `${host}:${port} is already in use (another server?); pick another --port`,
      {
        cause: e,
      },
    );
  }
  return new LocalServerError("start_failed", `the Workers runtime did not start: ${(e as Error).message}`, {
    cause: e,
  });
}

/**
 * workerd drains on SIGTERM: it stops accepting, lets the requests in flight
 * finish, then exits. Miniflare may then start a fresh runtime (it takes the
 * exit for a crash); the caller's dispose() right after tears that one down.
 */
async function drain(pid: number, graceMs: number): Promise<void> {
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return; // already gone
  }
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && isRunning(pid)) await new Promise((r) => setTimeout(r, 20));
}

function readIfExists(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

function isRunning(pid: number): boolean {
  try {
    return !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");
  } catch {
    return false;
  }
}

/** This process's workerd children, from /proc (empty elsewhere: then stop() cannot drain). */
function workerdChildren(): { pid: number; loopbackArg: string }[] {
  const out: { pid: number; loopbackArg: string }[] = [];
  let names: string[];
  try {
    names = readdirSync("/proc").filter((n) => /^\d+$/.test(n));
  } catch {
    return out;
  }
  for (const name of names) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid !== process.pid) continue;
      const args = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      const loopbackArg = args.find((a) => a.startsWith("--external-addr=loopback="));
      if (args[0]?.endsWith("workerd") && loopbackArg !== undefined) out.push({ pid: Number(name), loopbackArg });
    } catch {
      // exited while we looked
    }
  }
  return out;
}
