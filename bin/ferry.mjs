#!/usr/bin/env node
// The `ferry` launcher. Runs the prebuilt bundle (dist/cli/, made by
// `npm run build:client`, run on install and before tests) for a fast start;
// without it, or with FERRY_FROM_SOURCE=1, runs client/cli.ts through tsx.
import { existsSync } from "node:fs";

const bundle = new URL("../dist/cli/ferry.mjs", import.meta.url);
if (existsSync(bundle) && !process.env.FERRY_FROM_SOURCE) {
  await import(bundle.href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import(new URL("../client/cli.ts", import.meta.url).href);
}
