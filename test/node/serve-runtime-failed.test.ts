/**
 * `ferry serve` whose workerd dies again right after a restart (a crash loop)
 * gives up with `runtime_failed`, and then really ends: its port refuses, its
 * data directory can be served again. The front door (front-door.ts) is a
 * listener of this process: left open, it kept the process alive after the
 * error, accepting and dropping every connection, holding the lock, and deaf
 * to SIGTERM.
 */
import { readFileSync } from "node:fs";
import net from "node:net";
import { describe, expect, it } from "vitest";
import { tempDir } from "./support/hosts.ts";
import { processTree } from "./support/listeners.ts";
import { serversStoppedAfterEach, startServeProcess } from "./support/serve-process.ts";

const running = serversStoppedAfterEach();

function workerdOf(pid: number): number {
  const found = processTree(pid).find((p) => readFileSync(`/proc/${p}/comm`, "utf8").trim() === "workerd");
  if (found === undefined) throw new Error("no workerd under ferry serve");
  return found;
}

async function newWorkerd(pid: number, old: number): Promise<number> {
  for (let i = 0; i < 200; i++) {
    try {
      const now = workerdOf(pid);
      if (now !== old) return now;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("workerd was not started again");
}

describe.skipIf(process.platform !== "linux")("ferry serve after its runtime failed for good", () => {
  it("exits with runtime_failed, its port closed and its data directory free", async () => {
    const data = tempDir("serve-runtime-failed");
    const server = await startServeProcess(data);
    running.push(server);
    const pid = server.child.pid as number;
    const exited = new Promise<number | null>((resolve) => server.child.once("exit", (code) => resolve(code)));
    const first = workerdOf(pid);
    process.kill(first, "SIGKILL");
    process.kill(await newWorkerd(pid, first), "SIGKILL"); // within the restart window: given up

    const code = await Promise.race([
      exited,
      new Promise((resolve) => setTimeout(() => resolve("still running"), 10_000)),
    ]);
    expect(code, server.stderr()).not.toBe("still running");
    expect(server.stderr()).toContain("runtime_failed");
    const refused = await new Promise<boolean>((resolve) => {
      const probe = net.connect(server.port, "127.0.0.1");
      probe.once("connect", () => resolve(false)).once("error", () => resolve(true));
    });
    expect(refused).toBe(true);
    const again = await startServeProcess(data);
    running.push(again);
  });
});
