/**
 * `npm run build:client`: bundles the `ferry` CLI (client/cli.ts) into
 * dist/cli/, which bin/ferry.cjs runs. Built for a fast start:
 *
 * - Split into chunks at each dynamic import, so a command loads only what
 *   it runs: `ferry --help` and `ferry token` load the command definitions
 *   and commander; a plain push/pull/sync/status only the store, scanner,
 *   engine and HTTP transport (not commander: client/cli/host-argv.ts
 *   reads its command line); the WebSocket client, the watcher, the local server's
 *   launcher each their own chunk, loaded when used.
 * - Dependencies bundled in, not imported from node_modules: Node's ESM
 *   loader resolves each package and lexes every CommonJS one for its named
 *   exports, which cost more than the packages' own code (issue 13).
 *   better-sqlite3's JavaScript too (client/store/database.ts hands it its
 *   native addon's path). Left out: workerd and esbuild (large, native,
 *   `ferry serve` only) and ws's optional native helpers.
 * - CommonJS files (`.cjs`), not ES modules. esbuild splits only ES modules,
 *   so the chunks are built as ES modules and each is then turned into
 *   CommonJS on its own (imports become `require`, a dynamic import a
 *   deferred `require`). Node's ES module loader cost every command ~10 ms
 *   of CPU more than `require` of the same chunks (BENCHMARKS.md section 10):
 *   it reads files through the thread pool and links each module
 *   asynchronously.
 * - commander's `require("node:child_process")` deferred to first use
 *   (only executable subcommands use it, and ferry has none).
 * - node:crypto deferred to its first call: loading it cost every command
 *   ~10 ms of CPU, and a sync that hashes nothing (no file changed, a
 *   token given) never calls it (BENCHMARKS.md section 14).
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, transform } from "esbuild";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
export const CLI_OUT = join(ROOT, "dist", "cli");

/** `import.meta.url` in an ES module chunk; each CommonJS chunk defines it from its own file name. */
const MODULE_URL = "__ferryModuleUrl";

const deferChildProcess = {
  name: "defer-child-process",
  setup(b) {
    b.onResolve({ filter: /^node:child_process$/ }, (args) =>
      args.importer.includes(join("node_modules", "commander"))
        ? { path: "child_process", namespace: "deferred" }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "deferred" }, () => ({
      contents: 'module.exports = new Proxy({}, { get: (_, name) => require("node:child_process")[name] });',
      loader: "js",
    }));
  },
};

/**
 * ferry's imports of node:crypto, each name a function that loads the module
 * on its first call and keeps it: `createHash` runs once a chunk, where a
 * `require` per call cost ~0.3 µs against ~1.7 µs for the hash itself. A
 * name missing here fails the build ("No matching export"), never a command.
 */
const deferCrypto = {
  name: "defer-crypto",
  setup(b) {
    b.onResolve({ filter: /^node:crypto$/ }, (args) =>
      args.namespace === "deferred-crypto" ? undefined : { path: "crypto", namespace: "deferred-crypto" },
    );
    b.onLoad({ filter: /.*/, namespace: "deferred-crypto" }, () => ({
      contents: [
        "let crypto;",
        ...["createHash", "randomBytes"].map(
          (name) => `export const ${name} = (...args) => (crypto ??= require("node:crypto")).${name}(...args);`,
        ),
      ].join("\n"),
      loader: "js",
    }));
  },
};

rmSync(CLI_OUT, { recursive: true, force: true });
const { outputFiles } = await build({
  entryPoints: { ferry: join(ROOT, "client", "cli.ts") },
  outdir: CLI_OUT,
  outExtension: { ".js": ".cjs" },
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  splitting: true,
  platform: "node",
  format: "esm",
  target: "node20",
  external: ["workerd", "esbuild", "bufferutil", "utf-8-validate"],
  // FERRY_BUILD (client/version.ts): a watch serves commands of its own build only.
  define: {
    "import.meta.url": MODULE_URL,
    __FERRY_BUILD__: JSON.stringify(`${Date.now().toString(36)}-${process.pid}`),
  },
  plugins: [deferChildProcess, deferCrypto],
  write: false,
  logLevel: "warning",
});
for (const file of outputFiles) {
  const { code } = await transform(file.text, {
    format: "cjs",
    platform: "node",
    target: "node20",
    supported: { "dynamic-import": false },
    sourcefile: file.path,
    banner: file.text.includes(MODULE_URL)
      ? `var ${MODULE_URL} = require("node:url").pathToFileURL(__filename).href;`
      : "",
    logLevel: "warning",
  });
  mkdirSync(dirname(file.path), { recursive: true });
  writeFileSync(file.path, code);
}
