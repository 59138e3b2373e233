/**
 * The Worker that `ferry serve` runs: ferry's own source tree (worker/ and
 * wrangler.toml), bundled with esbuild the way `wrangler deploy` would, with the
 * runtime settings read from wrangler.toml so local and production agree.
 * Called once per server start by launch.ts.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "smol-toml";

/** A Durable Object binding wrangler.toml declares, and whether its class stores in SQLite (a `new_sqlite_classes` migration). */
export interface ObjectBinding {
  readonly name: string;
  readonly className: string;
  readonly sqlite: boolean;
}

/** An R2 bucket binding wrangler.toml declares (`[[r2_buckets]]`): `ferry serve` binds a local bucket of that name. */
export interface BucketBinding {
  readonly name: string;
  readonly bucketName: string;
}

export interface RuntimeSettings {
  /** wrangler.toml's `name`: with a class name, it makes the objects' unique key, as wrangler's does. */
  readonly name: string;
  readonly compatibilityDate: string;
  readonly compatibilityFlags: string[];
  readonly durableObjects: ObjectBinding[];
  readonly r2Buckets: BucketBinding[];
  /** wrangler.toml's `[vars]`: the same settings locally as deployed. */
  readonly vars: Record<string, string>;
}

export interface WorkerSource extends RuntimeSettings {
  /** The repository root: holds worker/ and wrangler.toml. */
  readonly root: string;
}

/**
 * Finds the root from this module's own location: client/serve/ when run from
 * source, dist/ when run from the CLI bundle; both sit below the root.
 */
export function findWorkerSource(from = dirname(fileURLToPath(import.meta.url))): WorkerSource {
  let dir = from;
  while (!existsSync(join(dir, "wrangler.toml")) || !existsSync(join(dir, "worker", "index.ts"))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`ferry's worker/ sources are not above ${from}`);
    dir = up;
  }
  return { root: dir, ...readRuntimeSettings(readFileSync(join(dir, "wrangler.toml"), "utf8")) };
}

/**
 * What the runtime needs from wrangler.toml, read with a TOML parser (the one
 * wrangler bundles, smol-toml); test/node/bindings.test.ts checks the result
 * against wrangler's own reading of the file. A value of another type than
 * wrangler accepts is an error here too, not a silent default.
 */
export function readRuntimeSettings(toml: string): RuntimeSettings {
  const config = parse(toml);
  const sqliteClasses = list(config.migrations).flatMap((m) => strings(table(m).new_sqlite_classes));
  const bindings = table(config.durable_objects).bindings;
  return {
    name: string(config.name, "name"),
    compatibilityDate: string(config.compatibility_date, "compatibility_date"),
    compatibilityFlags: strings(config.compatibility_flags),
    durableObjects: list(bindings).map((b) => {
      const className = string(table(b).class_name, "durable_objects.bindings.class_name");
      return {
        name: string(table(b).name, "durable_objects.bindings.name"),
        className,
        sqlite: sqliteClasses.includes(className),
      };
    }),
    r2Buckets: list(config.r2_buckets).map((b) => ({
      name: string(table(b).binding, "r2_buckets.binding"),
      bucketName: string(table(b).bucket_name, "r2_buckets.bucket_name"),
    })),
    vars: Object.fromEntries(Object.entries(table(config.vars)).map(([k, v]) => [k, string(v, `vars.${k}`)])),
  };
}

function string(value: unknown, key: string): string {
  if (typeof value !== "string") throw new Error(`wrangler.toml: ${key} must be a string`);
  return value;
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function strings(value: unknown): string[] {
  return list(value).map((v) => string(v, "a list item"));
}

function table(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/**
 * One ES module holding the Worker and its dependencies. esbuild is imported
 * here, lazily, so that commands other than `serve` never load it.
 */
export async function bundleWorker(source: WorkerSource): Promise<string> {
  const { build } = await import("esbuild");
  const result = await build({
    entryPoints: [join(source.root, "worker", "index.ts")],
    absWorkingDir: source.root,
    bundle: true,
    write: false,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    // The package fields a Workers bundler resolves (wrangler uses the same conditions).
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    external: ["cloudflare:*", "node:*"],
    logLevel: "silent",
  });
  const file = result.outputFiles[0];
  if (file === undefined) throw new Error("esbuild produced no Worker bundle");
  return file.text;
}

/**
 * A Durable Object namespace's unique key as Miniflare and `wrangler dev`
 * give it, `<worker>-<class>`: object ids are derived from it, and the disk
 * folder holding the objects is named after it (runtime-config.ts, data-dir.ts).
 */
export function namespaceKey(source: RuntimeSettings, binding: ObjectBinding): string {
  return `${source.name}-${binding.className}`;
}
