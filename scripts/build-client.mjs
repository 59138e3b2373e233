/**
 * `npm run build:client`: bundles the `ferry` CLI (client/cli.ts) into
 * dist/cli/, which bin/ferry.mjs runs. Built for a fast start:
 *
 * - Split into chunks at each dynamic import, so a command loads only what
 *   it runs: `ferry --help` and `ferry token` load the command definitions
 *   and commander; push/pull/sync the store, scanner, engine and HTTP
 *   transport; the WebSocket client, the watcher, the local server's
 *   launcher each their own chunk, loaded when used.
 * - Dependencies bundled in, not imported from node_modules: Node's ESM
 *   loader resolves each package and lexes every CommonJS one for its named
 *   exports, which cost more than the packages' own code (issue 13).
 *   Left out: better-sqlite3 (a native addon that finds its binary from its
 *   own path), miniflare and esbuild (large, native, `ferry serve` only) and
 *   ws's optional native helpers.
 */
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
export const CLI_OUT = join(ROOT, "dist", "cli");

rmSync(CLI_OUT, { recursive: true, force: true });
await build({
  entryPoints: { ferry: join(ROOT, "client", "cli.ts") },
  outdir: CLI_OUT,
  outExtension: { ".js": ".mjs" },
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  splitting: true,
  platform: "node",
  format: "esm",
  target: "node20",
  external: ["better-sqlite3", "miniflare", "esbuild", "bufferutil", "utf-8-validate"],
  // Bundled CommonJS (commander, ws, ignore) calls require() for Node's own modules.
  banner: {
    js: 'import { createRequire as __ferryRequire } from "node:module"; const require = __ferryRequire(import.meta.url);',
  },
  logLevel: "warning",
});
