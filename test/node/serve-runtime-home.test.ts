/**
 * Where `ferry serve` puts workerd's one socket (client/serve/runtime-home.ts):
 * a 0700 directory under the temporary directory, or under /tmp when that
 * path would be too long for a Unix socket; and a directory a server killed
 * outright left behind is removed by the next start (found by a tester:
 * hundreds of them in /tmp after test runs).
 */
import { existsSync, mkdirSync, readdirSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "./support/hosts.ts";
import { listenersOf, processTree } from "./support/listeners.ts";
import { serversStoppedAfterEach, startServeProcess } from "./support/serve-process.ts";

const running = serversStoppedAfterEach();

function runtimeSocketOf(pid: number): string {
  const unix = listenersOf(processTree(pid)).filter((l) => l.kind === "unix");
  expect(unix.length).toBe(1);
  return (unix[0] as { address: string }).address;
}

describe("ferry serve's runtime socket", () => {
  it("serves with a temporary directory too long for a Unix socket's path", async () => {
    const long = join(tempDir("long-tmp"), "x".repeat(90));
    mkdirSync(long, { recursive: true });
    const server = await startServeProcess(tempDir("serve-data"), { env: { TMPDIR: long } });
    running.push(server);
    expect(runtimeSocketOf(server.child.pid as number).startsWith("/tmp/ferry-runtime-")).toBe(true);
    expect((await fetch(`${server.url}/v1/health`)).status).toBe(200);
  });

  it("removes the runtime directory of a server killed outright, and no other", async () => {
    const tmp = tempDir("runtime-tmp");
    const first = await startServeProcess(tempDir("serve-data"), { env: { TMPDIR: tmp } });
    running.push(first);
    const left = join(runtimeSocketOf(first.child.pid as number), "..");
    await first.stop("SIGKILL");
    expect(existsSync(left), "left behind by kill -9").toBe(true);
    // Older than a start's grace (a server whose socket is not bound yet keeps its directory).
    utimesSync(left, new Date(Date.now() - 120_000), new Date(Date.now() - 120_000));
    const live = await startServeProcess(tempDir("serve-data"), { env: { TMPDIR: tmp } });
    running.push(live);
    const next = await startServeProcess(tempDir("serve-data"), { env: { TMPDIR: tmp } });
    running.push(next);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(existsSync(left), "removed by the next start").toBe(false);
    expect(readdirSync(tmp).filter((n) => n.startsWith("ferry-runtime-")).length, "the live servers' own").toBe(2);
    expect((await fetch(`${live.url}/v1/health`)).status).toBe(200);
  });
});
