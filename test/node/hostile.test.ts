/**
 * A hostile or broken server cannot make the host write outside its root,
 * follow a symlink out of it, or keep bytes that do not match their hash.
 * The real server refuses such entries, so these feed crafted answers to the
 * pull path (pullChanges and the applier) through a scripted transport.
 */
import { createHash } from "node:crypto";
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EngineContext } from "../../client/engine/context.ts";
import { pullChanges } from "../../client/engine/pull.ts";
import { emptyReport, SILENT } from "../../client/engine/report.ts";
import { IgnoreRules } from "../../client/scan/ignore-rules.ts";
import { Scanner } from "../../client/scan/scanner.ts";
import { statKey } from "../../client/scan/stat-key.ts";
import { openStore } from "../../client/store/sqlite-store.ts";
import type { HostStore } from "../../client/store/store.ts";
import type { Transport } from "../../client/transport/transport.ts";
import { decodeCbor, encodeCbor } from "../../protocol/cbor.ts";
import type { Change } from "../../protocol/changes.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { OPS, type OpName, type OpRequest, type OpResponse } from "../../protocol/ops.ts";
import { PROTOCOL_VERSION } from "../../protocol/version.ts";
import { cleanup, tempDir } from "./support/hosts.ts";
import { snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const utf8 = new TextEncoder();
const hashOf = (bytes: Uint8Array) => new Uint8Array(createHash("sha256").update(bytes).digest());

/**
 * A server that answers one page of the given changes and serves the given
 * objects. With `wire`, the page goes through CBOR and the host's decoder,
 * as over a real transport (which refuses a malformed page whole).
 */
function scriptedServer(
  changes: Change[],
  objects: { hash: Uint8Array; bytes: Uint8Array }[],
  wire: boolean,
): Transport {
  return {
    async call<K extends OpName>(op: K, req: OpRequest<K>): Promise<OpResponse<K>> {
      if (op === "changes") {
        const page = { entries: changes, next: { rev: 99, path: null }, more: false, rev: 99 };
        return (wire ? OPS.changes.decodeResponse(decodeCbor(encodeCbor(page))) : page) as unknown as OpResponse<K>;
      }
      if (op === "getObjects") {
        const asked = (req as OpRequest<"getObjects">).hashes.map((h) => Buffer.from(h).toString("hex"));
        const found = objects.filter((o) => asked.includes(Buffer.from(o.hash).toString("hex")));
        return { objects: found, missing: [] } as unknown as OpResponse<K>;
      }
      throw new Error(`unexpected ${op}`);
    },
    listen: () => ({ pushes: false, stop() {} }),
    async close() {},
  };
}

function fileChange(
  path: string,
  content: string,
  rev = 5,
): { change: Change; object: { hash: Uint8Array; bytes: Uint8Array } } {
  const bytes = utf8.encode(content);
  const hash = hashOf(bytes);
  return {
    change: { kind: "file", path, mode: 0o644, mtime: 1_700_000_000_000, size: bytes.length, chunks: [hash], rev },
    object: { hash, bytes },
  };
}

async function pullFrom(
  root: string,
  changes: Change[],
  objects: { hash: Uint8Array; bytes: Uint8Array }[],
  wire = false,
  /** Looks at the store once the pull is done. */
  inspect?: (store: HostStore) => void,
) {
  const store = openStore("memory", root);
  const ignore = new IgnoreRules([]);
  const ctx = new EngineContext(
    root,
    store,
    scriptedServer(changes, objects, wire),
    ignore,
    new Scanner(root, store, ignore),
    emptyReport(),
    SILENT,
  );
  ctx.hello = {
    version: PROTOCOL_VERSION,
    epoch: new Uint8Array(16),
    rev: 99,
    acked: { rev: 0, path: null },
    resync: false,
    limits: LIMITS,
    capabilities: [],
  };
  try {
    await pullChanges(ctx, { from: { rev: 0, path: null }, mode: "merge", skipOwn: true });
    inspect?.(store);
    return ctx.report;
  } finally {
    store.close();
  }
}

/** Everything under a directory, for "nothing was written here". */
function listing(dir: string): string[] {
  return readdirSync(dir, { recursive: true }).map(String).sort();
}

describe("pull applier against a hostile server", () => {
  it("refuses '..', absolute and non-NFC paths, writing nothing", async () => {
    const base = tempDir("hostile");
    const root = join(base, "root");
    writeTree(root, { "own.txt": "mine\n" });
    const evil = [
      fileChange("../escape.txt", "x"),
      fileChange("/tmp/abs.txt", "x"),
      fileChange("a/../../up.txt", "x"),
      fileChange("cafe\u0301", "x"),
    ];
    const report = await pullFrom(
      root,
      evil.map((e) => e.change),
      evil.map((e) => e.object),
    );
    expect(report.refused.map((r) => r.path)).toEqual(evil.map((e) => e.change.path));
    expect(listing(base)).toEqual(["root", "root/own.txt"]);
  });

  it("creates a symlink pointing out of the root but never writes through it", async () => {
    const root = tempDir("hostile");
    const outside = tempDir("outside");
    const passwd = fileChange("evil/passwd", "root::0:0::/:/bin/sh\n");
    const deeper = fileChange("evil/sub/dir/file", "x");
    const changes: Change[] = [
      { kind: "symlink", path: "evil", target: outside, rev: 5 },
      passwd.change,
      deeper.change,
      { kind: "dir", path: "evil/made", mode: 0o755, mtime: 0, rev: 5 },
      { kind: "gone", path: "evil/existing", rev: 5 },
    ];
    writeTree(outside, { existing: "keep me\n" });
    const report = await pullFrom(root, changes, [passwd.object, deeper.object]);
    expect(lstatSync(join(root, "evil")).isSymbolicLink()).toBe(true);
    expect(listing(outside)).toEqual(["existing"]);
    expect(readFileSync(join(outside, "existing"), "utf8")).toBe("keep me\n");
    // The tombstone under the link is not refused: there is nothing to remove (the server sends such
    // tombstones whenever a directory becomes a symlink), and nothing outside is touched (checked above).
    expect(report.refused.map((r) => r.path)).toEqual(["evil/passwd", "evil/sub/dir/file", "evil/made"]);
  });

  it("never follows a local symlink that leads out of the root: it is kept as a conflict copy", async () => {
    const root = tempDir("hostile");
    const outside = tempDir("outside");
    symlinkSync(outside, join(root, "link"));
    const f = fileChange("link/planted.txt", "x");
    const report = await pullFrom(root, [f.change], [f.object]);
    expect(listing(outside)).toEqual([]);
    expect(report.refused).toEqual([]);
    const copy = report.conflicts[0]?.copy as string;
    expect(report.conflicts).toEqual([{ path: "link", copy }]);
    expect(readlinkSync(join(root, copy))).toBe(outside);
    expect(lstatSync(join(root, "link")).isDirectory()).toBe(true);
    expect(readFileSync(join(root, "link/planted.txt"), "utf8")).toBe("x");
  });

  it("refuses paths inside the host's store and temporary files", async () => {
    const root = tempDir("hostile");
    const store = fileChange(".ferry/store.db", "garbage");
    const nested = fileChange("sub/.ferry", "garbage");
    const temp = fileChange(".ferry-tmp-abc", "garbage");
    const report = await pullFrom(
      root,
      [store.change, nested.change, temp.change],
      [store.object, nested.object, temp.object],
    );
    expect(report.refused.map((r) => r.path)).toEqual([".ferry/store.db", "sub/.ferry", ".ferry-tmp-abc"]);
    expect(existsSync(join(root, "sub"))).toBe(false);
  });

  it("refuses bytes that do not match their hash, leaving no file behind", async () => {
    const root = tempDir("hostile");
    const f = fileChange("lie.txt", "the truth");
    await expect(
      pullFrom(root, [f.change], [{ hash: f.object.hash, bytes: utf8.encode("a lie....") }]),
    ).rejects.toMatchObject({
      code: "hash_mismatch",
    });
    expect(listing(root)).toEqual([]);
  });

  it("refuses a file whose chunks do not add up to its size, leaving no temporary file, and goes on", async () => {
    const root = tempDir("hostile");
    const f = fileChange("short.txt", "abc");
    const report = await pullFrom(root, [{ ...f.change, size: 10 } as Change], [f.object]);
    expect(report.refused).toEqual([{ path: "short.txt", reason: "its chunks hold 3 bytes, the entry says 10" }]);
    expect(listing(root)).toEqual([]);
  });

  it("refuses a symlink whose target no push may carry (an older server stored it), and goes on", async () => {
    const root = tempDir("hostile");
    const f = fileChange("ok.txt", "ok\n");
    const changes: Change[] = [
      { kind: "symlink", path: "long", target: "t".repeat(4096), rev: 5 },
      { kind: "symlink", path: "lossy", target: "a\uFFFDb", rev: 5 },
      f.change,
    ];
    const report = await pullFrom(root, changes, [f.object], true);
    expect(report.refused).toEqual([
      { path: "long", reason: "target is longer than 4095 bytes" },
      { path: "lossy", reason: "target is not valid UTF-8" },
    ]);
    expect(listing(root)).toEqual(["ok.txt"]);
  });

  it("refuses a change no host may hold (path, kind, mode) alone, and applies the rest of the page", async () => {
    const root = tempDir("hostile");
    const f = fileChange("ok.txt", "ok\n");
    const d = (path: string, fields: Record<string, unknown> = {}) =>
      ({ kind: "dir", path, mode: 0o755, mtime: 1_700_000_000_000, rev: 5, ...fields }) as unknown as Change;
    const changes: Change[] = [
      d("../up"),
      d("/abs"),
      d("nul\0name"),
      d("odd", { kind: "fifo" }),
      d("wide", { mode: 0o10000 }),
      { ...f.change, path: "a/../../x.txt" },
      f.change,
      d("sub"),
    ];
    const report = await pullFrom(root, changes, [f.object], true);
    expect(report.refused).toEqual([
      { path: "../up", reason: "path has a '..' segment" },
      { path: "/abs", reason: "path is absolute" },
      { path: "nul\\u0000name", reason: "path contains NUL" },
      { path: "odd", reason: "entries[3].kind: expected file, dir, symlink or gone" },
      { path: "wide", reason: "entries[4].mode: permission bits only (at most 0o7777)" },
      { path: "a/../../x.txt", reason: "path has a '..' segment" },
    ]);
    expect(listing(root)).toEqual(["ok.txt", "sub"]);
  });

  it("gives each pulled file exactly its mode, and records the fingerprint of the file as placed", async () => {
    const root = tempDir("hostile");
    const modes = [0o000, 0o400, 0o600, 0o644, 0o664, 0o666, 0o700, 0o755, 0o775, 0o777, 0o1755];
    const files = modes.map((mode) => {
      const f = fileChange(`m${mode.toString(8)}`, `mode ${mode}\n`);
      return { mode, change: { ...f.change, mode } as Change, object: f.object };
    });
    const recorded = new Map<string, string | null | undefined>();
    await pullFrom(
      root,
      files.map((f) => f.change),
      files.map((f) => f.object),
      false,
      (store) => {
        for (const f of files) recorded.set(f.change.path, store.get(f.change.path)?.stat);
      },
    );
    for (const { mode, change } of files) {
      const st = lstatSync(join(root, change.path), { bigint: true });
      expect([change.path, Number(st.mode & 0o7777n)]).toEqual([change.path, mode]);
      expect(recorded.get(change.path)).toBe(statKey(st));
    }
  });

  it("never applies setuid or setgid bits", async () => {
    const root = tempDir("hostile");
    const f = fileChange("suid", "#!/bin/sh\n");
    await pullFrom(root, [{ ...f.change, mode: 0o6755 } as Change], [f.object]);
    expect(lstatSync(join(root, "suid")).mode & 0o7777).toBe(0o755);
    expect(snapshot(root)).toEqual({
      suid: `file 755 ${createHash("sha256").update("#!/bin/sh\n").digest("hex").slice(0, 16)}`,
    });
  });
});
