/**
 * The workerd configuration `ferry serve` runs (Cap'n Proto text, the schema
 * workerd embeds as /workerd/workerd.capnp): ferry's Worker, its Durable
 * Object namespace with SQLite storage on a local disk, wrangler.toml's vars,
 * and one socket, the one clients use. Nothing else listens: no loopback
 * server for a tool's own use, no inspector unless asked for. Written by
 * launch.ts into a private directory next to the Worker bundle, read by
 * workerd once at start.
 *
 * Storage is laid out as Miniflare and `wrangler dev` lay it out (a disk
 * service on `<data>/do`, one folder per namespace named by its unique key
 * `<worker>-<class>`, one `<object id>.sqlite` per object), and the unique key
 * is the one they use, so object ids (derived from it) and existing data
 * directories stay the same. R2 buckets, when bound, are Miniflare's R2
 * services on `<data>/r2` (local-r2.ts).
 */
import { capnpText as text } from "./capnp-text.ts";
import type { LocalR2Config } from "./local-r2.ts";
import { METER_MODULE } from "./object-meter.ts";
import { namespaceKey, type WorkerSource } from "./worker-source.ts";

/** The socket's name in the config; launch.ts binds it with `--socket-addr`. */
export const SOCKET_NAME = "http";
/** The Worker bundle's file name beside the config. */
export const WORKER_MODULE = "ferry-worker.mjs";
/** The request logger's file name beside the config (--verbose only). */
export const LOGGER_MODULE = "request-log.mjs";
const WORKER_SERVICE = "ferry";
const LOGGER_SERVICE = "request-log";
const STORAGE_SERVICE = "storage";

export interface RuntimeConfigOptions {
  readonly source: WorkerSource;
  /** Absolute: the disk service the objects' SQLite files live under. */
  readonly objectsRoot: string;
  /** Text bindings (vars); the secret is not among them (see SECRET_ENV). */
  readonly vars: Readonly<Record<string, string>>;
  /** Put the request logger in front of the Worker. */
  readonly verbose: boolean;
  /** The local R2 buckets (local-r2.ts); absent, the Worker has no bucket and keeps bytes in SQLite. */
  readonly r2?: LocalR2Config;
  /** Benchmarks only: an entry module in front of the bundle (object-meter.ts), embedded as METER_MODULE. */
  readonly meter?: boolean;
}

/**
 * The environment variable the secret reaches workerd through (a
 * `fromEnvironment` binding), so that it is written in no file and shown on
 * no command line.
 */
export const SECRET_ENV = "FERRY_SECRET";

/**
 * V8's young generation at most 1 MiB a semi-space (V8's default lets it grow
 * to 16 MiB, ~48 MiB for the three spaces, per isolate). What a request
 * leaves behind (a decoded push of 60,000 chunk hashes is 60,000 small
 * objects, an answer's buffers) is collected by the next scavenge instead of
 * accumulating: in `npm run bench:hostile-memory`, sixteen HTTP bodies and
 * sixteen socket frames of 60,000-chunk pushes, again and again, grew workerd
 * by 237 MiB with the default and by 136 MiB with this (BENCHMARKS.md,
 * "Memory under hostile clients").
 *
 * And `gc` exposed, for worker/do/reclaim.ts: the dead buffers requests leave
 * (bodies, socket frames, answers) are outside V8's heap, which V8 paces its
 * full collections by, so they piled up to ~215 MB before it collected; the
 * Worker collects after every 16 MiB of requests done with instead.
 */
export const V8_FLAGS = ["--max-semi-space-size=1", "--expose-gc"];

export function runtimeConfig(options: RuntimeConfigOptions): string {
  const { source } = options;
  const bindings = [
    ...source.durableObjects.map((d) => `(name = ${text(d.name)}, durableObjectNamespace = ${text(d.className)})`),
    ...Object.entries(options.vars).map(([name, value]) => `(name = ${text(name)}, text = ${text(value)})`),
    `(name = "FERRY_SECRET", fromEnvironment = ${text(SECRET_ENV)})`,
    ...(options.r2?.bindings ?? []),
  ];
  const namespaces = source.durableObjects.map(
    (d) => `(className = ${text(d.className)}, uniqueKey = ${text(namespaceKey(source, d))}, enableSql = ${d.sqlite})`,
  );
  const services = [
    `(name = ${text(WORKER_SERVICE)}, worker = .ferryWorker)`,
    `(name = ${text(STORAGE_SERVICE)}, disk = (path = ${text(options.objectsRoot)}, writable = true))`,
    ...(options.verbose ? [`(name = ${text(LOGGER_SERVICE)}, worker = .requestLog)`] : []),
    ...(options.r2?.services ?? []),
  ];
  const entry = options.verbose ? LOGGER_SERVICE : WORKER_SERVICE;
  return `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    ${services.join(",\n    ")}
  ],
  sockets = [(name = ${text(SOCKET_NAME)}, service = ${text(entry)}, http = ())],
  v8Flags = [${V8_FLAGS.map(text).join(", ")}],
  extensions = [${(options.r2?.extensions ?? []).join(", ")}],
);

const ferryWorker :Workerd.Worker = (
  modules = [${[...(options.meter === true ? [METER_MODULE] : []), WORKER_MODULE].map((m) => `(name = ${text(m)}, esModule = embed ${text(m)})`).join(", ")}],
  compatibilityDate = ${text(source.compatibilityDate)},
  compatibilityFlags = [${source.compatibilityFlags.map(text).join(", ")}],
  bindings = [
    ${bindings.join(",\n    ")}
  ],
  durableObjectNamespaces = [${namespaces.join(", ")}],
  durableObjectStorage = (localDisk = ${text(STORAGE_SERVICE)}),
);

const requestLog :Workerd.Worker = (
  modules = [(name = ${text(LOGGER_MODULE)}, esModule = embed ${text(LOGGER_MODULE)})],
  compatibilityDate = ${text(source.compatibilityDate)},
  compatibilityFlags = ["nodejs_compat"],
  bindings = [(name = "WORKER", service = ${text(WORKER_SERVICE)})],
);
${options.r2?.workers ?? ""}`;
}

/**
 * --verbose's request lines, `GET /v1/health 200 OK (3ms)` on stderr: a Worker
 * in front of ferry's that passes each request on (sockets included) and logs
 * it once the answer's head is back. It costs a relay per request, which is
 * why it is there only when asked for.
 */
export const REQUEST_LOG_SOURCE = `import { STATUS_CODES } from "node:http";
export default {
  async fetch(request, env) {
    const started = Date.now();
    const url = new URL(request.url);
    const line = (outcome) =>
      console.error(\`\${request.method} \${url.pathname}\${url.search} \${outcome} (\${Date.now() - started}ms)\`);
    try {
      const response = await env.WORKER.fetch(request);
      line(\`\${response.status} \${response.statusText || STATUS_CODES[response.status] || ""}\`.trimEnd());
      return response;
    } catch (e) {
      line(\`failed: \${e?.message}\`);
      throw e;
    }
  },
};
`;
