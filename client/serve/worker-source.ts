/**
 * The Worker that `ferry serve` runs: ferry's own source tree (worker/ and
 * wrangler.toml), bundled with esbuild the way `wrangler deploy` would, with the
 * runtime settings read from wrangler.toml so local and production agree.
 * Called once per server start by launch.ts.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The binding and class wrangler.toml declares; test/node/bindings.test.ts checks they agree. */
export const WORKSPACE_BINDING = { name: "WORKSPACE", className: "WorkspaceObject" } as const;
/** wrangler.toml's `name`: Miniflare names the objects' storage folder after it, as wrangler does. */
export const WORKER_NAME = "ferry";

export interface RuntimeSettings {
  readonly compatibilityDate: string;
  readonly compatibilityFlags: string[];
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
 * What the runtime needs from wrangler.toml, read with a few patterns rather
 * than a TOML parser (the file's shape is ours); test/node/bindings.test.ts
 * checks the result against wrangler's own reading of the file.
 */
export function readRuntimeSettings(toml: string): RuntimeSettings {
  const date = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(toml)?.[1];
  if (date === undefined) throw new Error("wrangler.toml has no compatibility_date");
  const flags = /^compatibility_flags\s*=\s*\[([^\]]*)\]/m.exec(toml)?.[1] ?? "";
  const varsTable = /^\[vars\]\s*$([\s\S]*?)(?=^\[|(?![\s\S]))/m.exec(toml)?.[1] ?? "";
  const vars = Object.fromEntries(
    [...varsTable.matchAll(/^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"([^"]*)"/gm)].map((m) => [m[1] as string, m[2] as string]),
  );
  return {
    compatibilityDate: date,
    compatibilityFlags: [...flags.matchAll(/"([^"]+)"/g)].map((m) => m[1] as string),
    vars,
  };
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
