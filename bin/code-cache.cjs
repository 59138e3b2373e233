// V8's code cache for the bundle's chunks, kept beside them in
// dist/cli/.v8-cache/ (bin/ferry.cjs installs it before the bundle loads).
// Node 20 compiles every chunk a command loads from source on every run
// (`module.enableCompileCache` is Node 22.1+), and compiling was the largest
// piece of loading a persisted 3,000-file `ferry sync` (BENCHMARKS.md
// section 15). A chunk's cache is made when the process exits, after the
// command ran, so it holds the functions that command compiled, not only the
// chunk's top level. Each file is keyed by the chunk's name, size and ctime
// (a rebuilt or rewritten chunk never meets an old cache; the build also
// deletes the folder) and by the V8 flags the launcher set, which V8 checks
// too. Not the mtime: npm gives every file of a package the same one, and V8
// checks only a source's length, so another version's chunk of the same
// length and name would have run the old code; a write sets the ctime.
// Best effort throughout: a cache that cannot be read or written, or that
// V8 rejects (another Node, a corrupt file), costs only the compile, and a
// rejected one is written again.
const Module = require("node:module");
const { Script } = require("node:vm");
const { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } = require("node:fs");
const { basename, dirname, join } = require("node:path");

const MAIN = require.main;

/**
 * Compiles every CommonJS file under `bundleDir` through V8's code cache.
 * `flags` names the V8 flags set before (part of each cache file's name).
 */
function useCodeCache(bundleDir, flags) {
  const cacheDir = join(bundleDir, ".v8-cache");
  const inBundle = join(bundleDir, "/");
  const made = [];
  const compile = Module.prototype._compile;
  Module.prototype._compile = function (content, filename) {
    if (!filename.startsWith(inBundle)) return compile.call(this, content, filename);
    const { ctimeMs, size } = statSync(filename);
    const file = join(cacheDir, `${basename(filename)}.${size}-${ctimeMs}.${flags}`);
    let cachedData;
    try {
      cachedData = readFileSync(file);
    } catch {}
    // Node's own wrapper, so line numbers in stack traces stay the chunk's.
    const wrapped = `(function (exports, require, module, __filename, __dirname) { ${content}\n});`;
    const script = new Script(wrapped, { filename, cachedData });
    if (cachedData === undefined || script.cachedDataRejected) made.push({ file, script });
    return script
      .runInThisContext()
      .call(this.exports, this.exports, requireFrom(this), this, filename, dirname(filename));
  };
  process.on("exit", () => {
    if (made.length === 0) return;
    try {
      mkdirSync(cacheDir, { recursive: true });
      for (const { file, script } of made) {
        // Renamed into place: a command starting meanwhile reads a whole file or none.
        const partial = `${file}.${process.pid}`;
        writeFileSync(partial, script.createCachedData());
        renameSync(partial, file);
      }
    } catch {}
  });
}

/** The `require` Node gives a module (lib/internal/modules/helpers.js, makeRequireFunction). */
function requireFrom(mod) {
  const require = (id) => mod.require(id);
  require.resolve = (request, options) => Module._resolveFilename(request, mod, false, options);
  require.main = MAIN;
  require.extensions = Module._extensions;
  require.cache = Module._cache;
  return require;
}

module.exports = { useCodeCache };
