/**
 * One entry this machine cannot write never stops a host: it is skipped,
 * reported (exit 3, `--json` lists path and reason), kept for the next pull
 * and retried there, while everything else applies. A full disk stops the
 * pull cleanly instead, and the next pull converges.
 */
import { spawnSync } from "node:child_process";
import fs, { chownSync, existsSync, lstatSync, readdirSync, readFileSync, rmSync } from "node:fs";
import module from "node:module";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sha256Sync } from "../../client/content/hash.ts";
import { HttpTransport } from "../../client/transport/http-transport.ts";
import { ORIGIN } from "../../protocol/cursor.ts";
import type { Entry } from "../../protocol/entry.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";
import { pushEntryOf } from "../../protocol/push.ts";
import { cliEnv, ferry, json } from "./support/cli.ts";
import { cleanup, endpointFor, newWorkspace, openHost, TRANSPORTS, tempDir } from "./support/hosts.ts";
import { chmod, pseudoRandom, snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const utf8 = new TextEncoder();

function fileOf(path: string, content: string | Uint8Array): { entry: Entry; object: ObjectBlob } {
  const bytes = typeof content === "string" ? utf8.encode(content) : content;
  const hash = sha256Sync(bytes);
  return {
    entry: { kind: "file", path, mode: 0o644, mtime: 1_700_000_000_000, size: bytes.byteLength, chunks: [hash] },
    object: { hash, bytes },
  };
}

/** Pushes entries as a host of its own would, with whatever paths the server accepts. */
async function pushRaw(workspace: string, files: { entry: Entry; object: ObjectBlob }[]): Promise<void> {
  const t = new HttpTransport(endpointFor(workspace));
  try {
    const hostId = crypto.getRandomValues(new Uint8Array(16));
    await t.call("putObjects", { objects: files.map((f) => f.object) });
    await t.call("push", {
      hostId,
      start: ORIGIN,
      end: { rev: 1, path: null },
      entries: files.map((f) => pushEntryOf(f.entry)),
      objects: [],
    });
  } finally {
    await t.close();
  }
}

interface PullReport {
  refused: { path: string; reason: string }[];
  entriesReceived: number;
}

describe("a pull with an entry this host cannot write", () => {
  it("applies everything else, exits 3 and lists the path with its reason", async () => {
    const ws = newWorkspace();
    // 16 segments of 255 bytes: a valid 4,095-byte path, too long once joined to any root.
    const long = Array.from({ length: 16 }, (_, i) => String.fromCharCode(97 + i).repeat(255)).join("/");
    await pushRaw(ws, [fileOf("a.txt", "a\n"), fileOf(long, "deep\n"), fileOf("z/z.txt", "z\n")]);
    const dst = tempDir("poisoned");
    const first = ferry(["pull", dst, "--json"], cliEnv(ws));
    expect(first.status).toBe(3);
    const report = json<PullReport>(first);
    expect(report.refused).toEqual([{ path: long, reason: expect.stringMatching(/^ENAMETOOLONG: /) }]);
    expect(readFileSync(join(dst, "a.txt"), "utf8")).toBe("a\n");
    expect(readFileSync(join(dst, "z/z.txt"), "utf8")).toBe("z\n");
    expect(first.stderr).toContain(`ferry: refused: ${long}: ENAMETOOLONG`);

    // Not forgotten behind the cursor: the next pull tries it again and says so again.
    const again = ferry(["pull", dst, "--json"], cliEnv(ws));
    expect(again.status).toBe(3);
    expect(json<PullReport>(again).refused.map((r) => r.path)).toEqual([long]);
    expect(json<PullReport>(again).entriesReceived).toBe(0);
  });

  it("retries a refused change on the next pull and writes it once it can", async () => {
    const ws = newWorkspace();
    // A child sent without its directory (allowed), where this host has a FIFO.
    await pushRaw(ws, [fileOf("p/f.txt", "f\n"), fileOf("q.txt", "q\n")]);
    const dst = tempDir("blocked");
    expect(spawnSync("mkfifo", [join(dst, "p")]).status).toBe(0);
    const first = ferry(["pull", dst, "--json"], cliEnv(ws));
    expect(first.status).toBe(3);
    expect(json<PullReport>(first).refused).toEqual([
      { path: "p/f.txt", reason: "its ancestor 'p' is not a directory" },
    ]);
    expect(readFileSync(join(dst, "q.txt"), "utf8")).toBe("q\n");

    rmSync(join(dst, "p"));
    const second = ferry(["pull", dst, "--json"], cliEnv(ws));
    expect([second.status, json<PullReport>(second).refused]).toEqual([0, []]);
    expect(readFileSync(join(dst, "p/f.txt"), "utf8")).toBe("f\n");
    const third = ferry(["pull", dst, "--json"], cliEnv(ws));
    expect([third.status, json<PullReport>(third).refused]).toEqual([0, []]);
  });
});

/** Runs the CLI as `nobody` when the tests run as root (CI), so permissions are enforced. */
function asUser(root: string): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const nobody = { uid: 65534, gid: 65534 };
  chownTree(root, nobody);
  return nobody;
}

function chownTree(root: string, to: { uid: number; gid: number }): void {
  chownSync(root, to.uid, to.gid);
  for (const name of readdirSync(root, { recursive: true })) chownSync(join(root, String(name)), to.uid, to.gid);
}

describe("a directory without write permission", () => {
  it("round-trips with its files between two hosts that are not root", () => {
    const ws = newWorkspace();
    const env = cliEnv(ws);
    const a = tempDir("locked-a");
    const b = tempDir("locked-b");
    writeTree(a, { "ro/f.txt": "one\n", "ro/sub/g.txt": "two\n" });
    chmod(a, "ro/sub", 0o555);
    chmod(a, "ro", 0o555);
    const userA = asUser(a);
    const userB = asUser(b);
    const run = (dir: string, verb: string, user: typeof userA) => {
      const r = ferry([verb, dir, "--json"], env, user);
      expect(r.status, r.stderr).toBe(0);
      return r;
    };
    run(a, "push", userA);
    run(b, "pull", userB);
    expect(snapshot(b)).toEqual(snapshot(a));
    expect(lstatSync(join(b, "ro")).mode & 0o777).toBe(0o555);

    // A change inside the locked directories, then their deletion, reach the other host.
    chmod(a, "ro/sub", 0o755);
    writeTree(a, { "ro/sub/g.txt": "changed\n" });
    chmod(a, "ro/sub", 0o555);
    if (userA) chownTree(a, userA);
    run(a, "push", userA);
    run(b, "pull", userB);
    expect(snapshot(b)).toEqual(snapshot(a));
    expect(readFileSync(join(b, "ro/sub/g.txt"), "utf8")).toBe("changed\n");

    chmod(a, "ro", 0o755);
    chmod(a, "ro/sub", 0o755);
    rmSync(join(a, "ro"), { recursive: true });
    run(a, "push", userA);
    run(b, "pull", userB);
    expect(existsSync(join(b, "ro"))).toBe(false);
  });
});

/**
 * Makes every `fs.writeSync` and `fs.writevSync` fail with ENOSPC once `budget` bytes have been
 * written, as a full disk does; returns the function that restores it.
 * syncBuiltinESMExports carries the patch to `import { writeSync }` and `import { writevSync }` too.
 */
function fillDiskAfter(budget: number): () => void {
  const real = { writeSync: fs.writeSync, writevSync: fs.writevSync };
  let left = budget;
  const spend = (length: number) => {
    if (length > left) throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    left -= length;
  };
  fs.writeSync = ((fd: number, buffer: Uint8Array, ...rest: unknown[]) => {
    spend(typeof rest[1] === "number" ? rest[1] : buffer.byteLength);
    return (real.writeSync as (...a: unknown[]) => number)(fd, buffer, ...rest);
  }) as typeof fs.writeSync;
  // The applier writes a chunk's parts with one writev (write-file.ts).
  fs.writevSync = ((fd: number, buffers: readonly NodeJS.ArrayBufferView[], position?: number) => {
    spend(buffers.reduce((n, b) => n + b.byteLength, 0));
    return real.writevSync(fd, buffers, position);
  }) as typeof fs.writevSync;
  module.syncBuiltinESMExports();
  return () => {
    fs.writeSync = real.writeSync;
    fs.writevSync = real.writevSync;
    module.syncBuiltinESMExports();
  };
}

/** Makes `fs.statfsSync` report `free` bytes available, as a disk with that much room left does. */
function reportFree(free: number): () => void {
  const real = fs.statfsSync;
  fs.statfsSync = ((path: fs.PathLike) => {
    const s = real(path);
    return { ...s, bavail: Math.floor(free / s.bsize), bfree: Math.floor(free / s.bsize) };
  }) as typeof fs.statfsSync;
  module.syncBuiltinESMExports();
  return () => {
    fs.statfsSync = real;
    module.syncBuiltinESMExports();
  };
}

const http = (TRANSPORTS[0] as (typeof TRANSPORTS)[number]).factory;

describe("a pull onto a full disk", () => {
  it("stops with disk_full, leaves no partial file, and the next pull converges", async () => {
    const ws = newWorkspace();
    const src = openHost(ws, { storeKind: "disk", factory: http });
    writeTree(src.root, {
      "a.txt": "a\n",
      "big.bin": pseudoRandom(3 * 1024 * 1024, 7),
      "c.txt": "c\n",
    });
    await src.engine.sync();
    const dst = openHost(ws, { storeKind: "disk", factory: http });
    const restore = fillDiskAfter(1024 * 1024);
    try {
      await expect(dst.engine.sync()).rejects.toMatchObject({ code: "disk_full" });
    } finally {
      restore();
    }
    expect(readdirSync(dst.root).filter((n) => n.startsWith(".ferry-"))).toEqual([]);
    expect(existsSync(join(dst.root, "big.bin"))).toBe(false);
    expect(readFileSync(join(dst.root, "a.txt"), "utf8")).toBe("a\n");

    const report = await dst.engine.sync();
    expect(report.refused).toEqual([]);
    expect(snapshot(dst.root)).toEqual(snapshot(src.root));
    const after = await dst.engine.sync();
    expect([after.entriesReceived, after.entriesSent, after.objectBytesReceived]).toEqual([0, 0, 0]);
  });

  it("refuses alone a file larger than the room left, applies the rest, and writes it once there is room", async () => {
    const ws = newWorkspace();
    // 70 MiB named by one 1 MiB chunk: a read-write client pushes it for the price of 1 MiB.
    const chunk = fileOf("huge.bin", pseudoRandom(1024 * 1024, 3));
    const huge: Entry = {
      kind: "file",
      path: "huge.bin",
      mode: 0o644,
      mtime: 1_700_000_000_000,
      size: 70 * 1024 * 1024,
      chunks: Array(70).fill(chunk.object.hash),
    };
    await pushRaw(ws, [fileOf("a.txt", "a\n"), { entry: huge, object: chunk.object }, fileOf("z.txt", "z\n")]);
    const dst = openHost(ws, { storeKind: "disk", factory: http });
    const restore = [reportFree(65 * 1024 * 1024), fillDiskAfter(65 * 1024 * 1024)];
    let report: Awaited<ReturnType<typeof dst.engine.sync>>;
    try {
      report = await dst.engine.sync();
    } finally {
      for (const r of restore) r();
    }
    expect(report.refused).toEqual([{ path: "huge.bin", reason: expect.stringMatching(/^ENOSPC: /) }]);
    expect([readFileSync(join(dst.root, "a.txt"), "utf8"), readFileSync(join(dst.root, "z.txt"), "utf8")]).toEqual([
      "a\n",
      "z\n",
    ]);
    expect(readdirSync(dst.root).filter((n) => n.startsWith(".ferry-") || n === "huge.bin")).toEqual([]);

    const roomy = await dst.engine.sync();
    expect(roomy.refused).toEqual([]);
    expect(lstatSync(join(dst.root, "huge.bin")).size).toBe(70 * 1024 * 1024);
  });
});
