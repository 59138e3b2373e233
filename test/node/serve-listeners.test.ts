/**
 * `ferry serve` lets nobody in but through its own port: the process tree
 * (ferry serve, workerd) listens on that one TCP socket, ferry serve's front
 * door, and on workerd's Unix socket behind it, which no other user can open
 * (no loopback server for a tool's own use, which any local user could reach,
 * no inspector unless asked for, none for its R2 bucket), whatever --verbose
 * and --host say; and Miniflare's old file write (`/core/store-temp-file`,
 * issue 28) reaches nothing on any port it has.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "./support/hosts.ts";
import { listenersOf, processTree } from "./support/listeners.ts";
import { type ServeProcess, serversStoppedAfterEach, startServeProcess } from "./support/serve-process.ts";

const running = serversStoppedAfterEach();

async function serve(args: readonly string[] = []): Promise<ServeProcess> {
  const server = await startServeProcess(tempDir("serve-data"), { args });
  running.push(server);
  return server;
}

const FLAG_SETS: { flags: string[] }[] = [
  { flags: [] },
  { flags: ["--verbose"] },
  { flags: ["--verbose", "--host", "0.0.0.0"] },
];

/** uid and gid of `nobody`: another user, who may not reach the runtime. */
const NOBODY = 65534;

/**
 * What connecting to the Unix socket at `path` as `uid` says: `connected`
 * or the error's code. The test runs as root in CI, which may take any uid;
 * anyone else cannot, and then the directory's mode above is the proof.
 */
function openedAs(uid: number, path: string): string {
  if (process.getuid?.() !== 0) return "EACCES (not root: the directory's mode is the proof)";
  const script =
    "const s=require('node:net').connect(process.argv[1]);" +
    "s.on('connect',()=>{console.log('connected');s.destroy()});s.on('error',(e)=>console.log(e.code))";
  const asUid = ["setpriv", `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", process.execPath];
  const run = spawnSync(asUid[0] as string, [...asUid.slice(1), "-e", script, path], { encoding: "utf8" });
  return run.stdout.trim() || run.stderr.trim();
}

describe("ferry serve's sockets", () => {
  it.each(FLAG_SETS)("are its public port alone (flags $flags)", async ({ flags }) => {
    const server = await serve(flags);
    const pids = processTree(server.child.pid as number);
    expect(pids.length, "ferry serve and its runtime").toBeGreaterThanOrEqual(2);
    const listeners = listenersOf(pids);
    const expected = flags.includes("0.0.0.0") ? "0.0.0.0" : "127.0.0.1";
    expect(listeners.filter((l) => l.kind === "tcp").map(({ pid, address, port }) => ({ pid, address, port }))).toEqual(
      [{ pid: server.child.pid, address: expected, port: server.port }],
    );
    const unix = listeners.filter((l) => l.kind === "unix");
    expect(unix.length, "workerd's one socket, behind the front door").toBe(1);
    const path = (unix[0] as { address: string }).address;
    expect(path.startsWith("/"), `a path, not an abstract name any user can open: ${path}`).toBe(true);
    const home = statSync(dirname(path));
    expect({ owner: home.uid, mode: home.mode & 0o777 }).toEqual({ owner: process.getuid?.(), mode: 0o700 });
    expect(openedAs(NOBODY, path), "another user opening the runtime's socket").toMatch(/EACCES/);
    // With its R2 bucket bound (client/serve/local-r2.ts): the bucket's services add no socket.
    expect(await (await fetch(`${server.url}/v1/health`)).json()).toMatchObject({ packs: "r2" });
  });

  it.each(FLAG_SETS)("write no file for a store-temp-file request on any of them (flags $flags)", async ({ flags }) => {
    const server = await serve(flags);
    const target = join(tempDir("serve-target"), "private");
    mkdirSync(target, { mode: 0o700 });
    const ports = new Set([server.port, ...listenersOf(processTree(server.child.pid as number)).map((l) => l.port)]);
    for (const port of ports) {
      const traversal = `/../../../../../../../..${target}/written-through-${port}`;
      await fetch(`http://127.0.0.1:${port}/core/store-temp-file?prefix=x&extension=${encodeURIComponent(traversal)}`, {
        method: "POST",
        body: "owned\n",
      }).catch(() => undefined);
      expect(existsSync(`${target}/written-through-${port}`), `written through port ${port}`).toBe(false);
    }
  });
});
