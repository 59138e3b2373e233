#!/usr/bin/env node
// The `ferry` launcher. Runs the prebuilt bundle (dist/cli/, made by
// `npm run build:client`, run on install and before tests) for a fast start;
// without it, or with FERRY_FROM_SOURCE=1, runs client/cli.ts through tsx.
// CommonJS, as the bundle is: an ES module entry alone costs a command
// Node's ES module loader (BENCHMARKS.md section 10).
const { existsSync } = require("node:fs");
const { join } = require("node:path");
const { pathToFileURL } = require("node:url");

const bundle = join(__dirname, "..", "dist", "cli", "ferry.cjs");
if (existsSync(bundle) && !process.env.FERRY_FROM_SOURCE) {
  require(bundle);
} else {
  import("tsx/esm/api").then(({ register }) => {
    register();
    return import(pathToFileURL(join(__dirname, "..", "client", "cli.ts")).href);
  });
}
