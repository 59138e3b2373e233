#!/usr/bin/env node
// The `ferry` launcher. Runs the prebuilt bundle (dist/cli/, made by
// `npm run build:client`, run on install and before tests) for a fast start;
// without it, or with FERRY_FROM_SOURCE=1, runs client/cli.ts through tsx.
// CommonJS, as the bundle is: an ES module entry alone costs a command
// Node's ES module loader (BENCHMARKS.md section 10).
// A command is a short process, and V8's optimizing compiler, started as
// soon as code has run a little, cost it more than it saved: with eight
// times V8's default budget before optimizing, a persisted 3,000-file
// `ferry sync` took 15% less CPU and a first push of 14 MB 14% less, a
// 100 MB push the same (BENCHMARKS.md section 10). Long loops (the chunker)
// are still optimized, a little later. Before any of ferry's code is loaded,
// and only for the commands that scan or sync: loading node:v8 costs ~6 ms,
// more than `ferry --help` would gain. A scan of a large tree runs long
// enough for optimized code to pay: it gets the default back
// (client/cli/large-scan.ts).
const WORKING = new Set(["push", "pull", "sync", "status", "restore"]);
const working = WORKING.has(process.argv[2]);
if (working) require("node:v8").setFlagsFromString("--interrupt-budget=540000");
const { existsSync } = require("node:fs");
const { join } = require("node:path");

const bundleDir = join(__dirname, "..", "dist", "cli");
const bundle = join(bundleDir, "ferry.cjs");
if (existsSync(bundle) && !process.env.FERRY_FROM_SOURCE) {
  require("./code-cache.cjs").useCodeCache(bundleDir, working ? "budget" : "plain");
  require(bundle);
} else {
  import("tsx/esm/api").then(({ register }) => {
    register();
    return import(require("node:url").pathToFileURL(join(__dirname, "..", "client", "cli.ts")).href);
  });
}
