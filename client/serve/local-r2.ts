/**
 * The R2 buckets `ferry serve` binds (wrangler.toml's `[[r2_buckets]]`;
 * issue 31): Miniflare's R2, the implementation `wrangler dev` and the worker
 * tests run, placed inside ferry's own workerd config (runtime-config.ts)
 * without Miniflare's Node side. workerd has no R2 of its own: an `r2Bucket`
 * binding names a service that speaks workerd's internal R2 protocol over
 * HTTP. Miniflare's is a Durable Object (bucket.worker.js) keeping each
 * object's metadata in its SQLite and its bytes as blob files on a disk
 * service; it checks `sha256`/`md5` and `onlyIf` conditions as R2 does. An
 * entry Worker (object-entry.worker.js) routes a bucket's requests to the
 * object named after the bucket. Their scripts are read from the installed
 * `miniflare` package (the version wrangler runs) at each start, never copied
 * into this repository; the object's with one line spliced in so that it
 * reads a put's body in large pieces (r2-large-reads.ts says why).
 *
 * Laid out as Miniflare lays out `wrangler dev`'s `.wrangler/state/v3/r2`
 * (here `<data>/r2`): `miniflare-R2BucketObject/<object id>.sqlite` for the
 * metadata, `<bucket name>/blobs/<blob id>` for the bytes, with the same
 * unique key and bucket names, so a `wrangler dev` state directory's buckets
 * read the same.
 *
 * Left unbound on purpose: `MINIFLARE_LOOPBACK`, through which Miniflare's
 * objects send their log lines and errors to its Node-side loopback server.
 * ferry runs no such server (issue 28: any local user could write files
 * through it); without the binding the object logs to stderr instead, which
 * launch.ts passes on. Nothing here listens: these are services inside the
 * one workerd process, reachable only through the bindings below.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { capnpText as text } from "./capnp-text.ts";
import { withLargeReads } from "./r2-large-reads.ts";
import type { BucketBinding } from "./worker-source.ts";

export interface LocalR2 {
  /** Absolute: the disk service holding the buckets' metadata and blobs (`<data>/r2`). */
  readonly root: string;
  readonly buckets: readonly BucketBinding[];
}

/** The pieces runtime-config.ts splices into its config, and the files they embed. */
export interface LocalR2Config {
  readonly bindings: string[];
  readonly services: string[];
  readonly extensions: string[];
  /** `const` Worker definitions, after the config. */
  readonly workers: string;
  /** File name to contents, beside the config (read by workerd through `embed`). */
  readonly files: Record<string, string>;
}

/** Miniflare's names (its R2 plugin): the unique key names the metadata folder, as in `wrangler dev`'s state. */
const OBJECT_CLASS = "R2BucketObject";
const UNIQUE_KEY = `miniflare-${OBJECT_CLASS}`;
const NAMESPACE_BINDING = "MINIFLARE_NAMESPACE";
const OBJECT_BINDING = "MINIFLARE_OBJECT";
const BLOBS_BINDING = "MINIFLARE_BLOBS";
/**
 * The date and flags Miniflare runs these scripts with. `experimental` lets
 * its object use `SqlStorage.prepare`; workerd accepts the flag only when
 * started with `--experimental` (runtime-process.ts), which enables nothing
 * for a Worker that does not ask for an experimental flag: ferry's does not.
 */
const COMPATIBILITY_DATE = "2023-07-24";
const R2_COMPATIBILITY_FLAGS = ["nodejs_compat", "experimental"];

const BUCKET_SERVICE = "r2-bucket";
const STORAGE_SERVICE = "r2-storage";
const FILES = {
  shared: "miniflare-shared.mjs",
  zod: "miniflare-zod.mjs",
  bucket: "r2-bucket.mjs",
  entry: "r2-entry.mjs",
} as const;

export function localR2Config(r2: LocalR2): LocalR2Config {
  const entryService = (b: BucketBinding) => `r2-entry:${b.bucketName}`;
  const entryWorker = (b: BucketBinding) => `(
    modules = [(name = "object-entry.worker.js", esModule = embed ${text(FILES.entry)})],
    compatibilityDate = ${text(COMPATIBILITY_DATE)},
    bindings = [
      (name = ${text(NAMESPACE_BINDING)}, text = ${text(b.bucketName)}),
      (name = ${text(OBJECT_BINDING)}, durableObjectNamespace = (serviceName = ${text(BUCKET_SERVICE)}, className = ${text(OBJECT_CLASS)})),
    ],
  )`;
  const buckets = uniqueBuckets(r2.buckets);
  return {
    bindings: r2.buckets.map((b) => `(name = ${text(b.name)}, r2Bucket = ${text(entryService(b))})`),
    services: [
      ...buckets.map((b) => `(name = ${text(entryService(b))}, worker = ${entryWorker(b)})`),
      `(name = ${text(BUCKET_SERVICE)}, worker = .r2BucketObject)`,
      `(name = ${text(STORAGE_SERVICE)}, disk = (path = ${text(r2.root)}, writable = true))`,
    ],
    extensions: [
      `(modules = [(name = "miniflare:shared", esModule = embed ${text(FILES.shared)}), (name = "miniflare:zod", esModule = embed ${text(FILES.zod)})])`,
    ],
    workers: `
const r2BucketObject :Workerd.Worker = (
  modules = [(name = "bucket.worker.js", esModule = embed ${text(FILES.bucket)})],
  compatibilityDate = ${text(COMPATIBILITY_DATE)},
  compatibilityFlags = [${R2_COMPATIBILITY_FLAGS.map(text).join(", ")}],
  durableObjectNamespaces = [(className = ${text(OBJECT_CLASS)}, uniqueKey = ${text(UNIQUE_KEY)}, enableSql = true)],
  durableObjectStorage = (localDisk = ${text(STORAGE_SERVICE)}),
  bindings = [(name = ${text(BLOBS_BINDING)}, service = ${text(STORAGE_SERVICE)})],
);
`,
    files: miniflareScripts(),
  };
}

/** Two bindings may name one bucket: one entry service serves both. */
function uniqueBuckets(buckets: readonly BucketBinding[]): BucketBinding[] {
  return [...new Map(buckets.map((b) => [b.bucketName, b])).values()];
}

/** The scripts from the installed miniflare package (dist/src/workers/, beside its main module). */
function miniflareScripts(): Record<string, string> {
  const workers = join(dirname(createRequire(import.meta.url).resolve("miniflare")), "workers");
  const read = (path: string) => readFileSync(join(workers, path), "utf8");
  return {
    [FILES.shared]: read("shared/index.worker.js"),
    [FILES.zod]: read("shared/zod.worker.js"),
    [FILES.bucket]: withLargeReads(read("r2/bucket.worker.js")),
    [FILES.entry]: read("shared/object-entry.worker.js"),
  };
}
