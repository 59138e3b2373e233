/**
 * Global setup for the Node tests: the real Worker on workerd through the
 * launcher `ferry serve` uses (client/serve/launch.ts), on a free port, with
 * SQLite persistence in a fresh temp dir and a test secret. Tests read the URL and secret with
 * `inject("ferryUrl")` / `inject("ferrySecret")`.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { startLocalServer } from "../../../client/serve/launch.ts";

export const TEST_SECRET = "ferry-node-test-secret";

declare module "vitest" {
  export interface ProvidedContext {
    ferryUrl: string;
    ferrySecret: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The CLI tests run bin/ferry.cjs, which prefers the bundle: build it from the sources under test.
  execFileSync("npm", ["run", "-s", "build:client"], { stdio: "inherit" });
  const persist = mkdtempSync(join(tmpdir(), "ferry-node-server-"));
  // Without the bucket: these tests count stored bytes and collections as SQLite storage does (a pack
  // in R2 keeps its rows a pack grace, and its header counts). R2 is proven on servers of its own:
  // serve-r2.test, the soak with FERRY_SOAK_GC_MS, and the workerd-r2 project.
  const server = await startLocalServer({ dataDir: persist, port: 0, secret: TEST_SECRET, r2: false });
  project.provide("ferryUrl", server.url);
  project.provide("ferrySecret", TEST_SECRET);
  return async () => {
    await server.stop();
    rmSync(persist, { recursive: true, force: true });
  };
}
