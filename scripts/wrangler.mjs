#!/usr/bin/env node
// Runs the pinned wrangler CLI directly. Its launcher refuses Node 20, but the
// CLI itself runs here (this machine has Node 20; see README.md).
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
const cli = path.join(path.dirname(require.resolve("wrangler/package.json")), "wrangler-dist/cli.js");
const child = spawn(process.execPath, ["--no-warnings", cli, ...process.argv.slice(2)], { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
