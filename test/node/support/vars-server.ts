/**
 * A local server of one test file's own, with Worker variables the suite's
 * server does not set (retention, for the collector's tests): started before
 * the file's tests, stopped after them. Its storage is not a `tempDir`,
 * which every test's cleanup removes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, inject } from "vitest";
import { startLocalServer } from "../../../client/serve/launch.ts";
import { endpointFor } from "./hosts.ts";

export interface VarsServer {
  readonly url: string;
}

export function serverWithVars(vars: Readonly<Record<string, string>>): VarsServer {
  let server: Awaited<ReturnType<typeof startLocalServer>> | undefined;
  let dataDir = "";
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "ferry-vars-server-"));
    // Without the bucket, as the shared server (support/server.ts says why).
    server = await startLocalServer({ dataDir, port: 0, secret: inject("ferrySecret"), vars, r2: false });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return {
    get url() {
      if (!server) throw new Error("the server starts before the tests");
      return server.url;
    },
  };
}

/** Runs a collection of `workspace` now (`POST …/gc`) and answers what it freed. */
export async function collectNow(url: string, workspace: string): Promise<{ freed: { objects: number } }> {
  const { token } = endpointFor(workspace, "rw", url);
  const res = await fetch(`${url}/v1/workspaces/${workspace}/gc`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { freed: { objects: number } };
}
