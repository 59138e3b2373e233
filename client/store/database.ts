/**
 * Opening a better-sqlite3 database (the host store, sqlite-store.ts; the
 * root's binding and lock, binding.ts) with its native addon found from the
 * package itself. The CLI bundle carries better-sqlite3's JavaScript
 * (loading its files one by one cost every command that opens a store
 * ~20 ms of CPU, BENCHMARKS.md section 10), and the package's own lookup
 * (the `bindings` package) starts from the file that calls it, which in the
 * bundle is ferry's, not better-sqlite3's.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";

/** Where node-gyp and prebuild-install put the addon; elsewhere, better-sqlite3 looks for it itself. */
const BUILT = [join("build", "Release"), join("build", "Debug")];

let found: { readonly path: string | undefined } | null = null;

function nativeBinding(): string | undefined {
  if (found === null) {
    const root = dirname(createRequire(import.meta.url).resolve("better-sqlite3/package.json"));
    const path = BUILT.map((dir) => join(root, dir, "better_sqlite3.node")).find((p) => existsSync(p));
    found = { path };
  }
  return found.path;
}

export function openDatabase(file: string, options: Database.Options = {}): Database.Database {
  const path = nativeBinding();
  return new Database(file, path === undefined ? options : { ...options, nativeBinding: path });
}

export type { Database };
