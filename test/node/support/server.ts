/**
 * Global setup for the Node tests: the real Worker on workerd through
 * wrangler's programmatic API, on a free port, with SQLite persistence in a
 * fresh temp dir and a test secret. Tests read the URL and secret with
 * `inject("ferryUrl")` / `inject("ferrySecret")`.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { unstable_startWorker } from "wrangler";

export const TEST_SECRET = "ferry-node-test-secret";

declare module "vitest" {
  export interface ProvidedContext {
    ferryUrl: string;
    ferrySecret: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The CLI tests run bin/ferry.mjs, which prefers the bundle: build it from the sources under test.
  execFileSync("npm", ["run", "-s", "build:client"], { stdio: "inherit" });
  const persist = mkdtempSync(join(tmpdir(), "ferry-node-server-"));
  const worker = await unstable_startWorker({
    config: "wrangler.toml",
    bindings: { FERRY_SECRET: { type: "plain_text", value: TEST_SECRET } },
    dev: { server: { hostname: "127.0.0.1", port: 0 }, inspector: false, persist, watch: false, logLevel: "error" },
  });
  await worker.ready;
  const url = (await worker.url).origin;
  project.provide("ferryUrl", url);
  project.provide("ferrySecret", TEST_SECRET);
  return async () => {
    await worker.dispose();
    rmSync(persist, { recursive: true, force: true });
  };
}
