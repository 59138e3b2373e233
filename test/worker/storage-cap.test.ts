/**
 * The object's storage cap (worker/sync/capacity.ts): vitest.worker.config.ts
 * sets FERRY_STORAGE_CAP to 64 MiB; this fills it and proves that new bytes
 * past it are refused with workspace_full and store nothing, while what
 * brings no new bytes (held objects, entries, deletions) still goes through.
 */
import { describe, expect, it } from "vitest";
import { encodeCbor } from "../../protocol/cbor.ts";
import { joinHashes, sha256 } from "../../protocol/hash.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";
import { freshWorkspace, gone, ok, refused, TestHost, type Workspace } from "./helpers.ts";

const MiB = 1024 * 1024;
const CAP = 64 * MiB;

/** `count` distinct objects of `size` bytes, tagged so no two tests share one. */
async function objects(tag: string, count: number, size = MiB - 1024): Promise<ObjectBlob[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const bytes = new Uint8Array(size);
      bytes.set(new TextEncoder().encode(`${tag} ${i} ${crypto.randomUUID()}`));
      return { hash: await sha256(bytes), bytes };
    }),
  );
}

interface Storage {
  usedBytes: number;
  capBytes: number | null;
  objects: number;
  storedBytes: number;
}

async function storage(ws: Workspace): Promise<Storage> {
  const { usedBytes, capBytes, objects, storedBytes } = (await ws.stats()).storage;
  return { usedBytes, capBytes, objects, storedBytes };
}

/** `request` encoded into a buffer of its own: the encoder's may be larger, and RPC sends the whole buffer. */
function body(request: unknown): Uint8Array {
  return encodeCbor(request).slice();
}

/** Uploads 8-MiB batches until the next would not fit; returns what was uploaded. */
async function fill(ws: Workspace): Promise<ObjectBlob[]> {
  const held: ObjectBlob[] = [];
  for (let round = 0; (await storage(ws)).usedBytes + 9 * MiB < CAP; round++) {
    const batch = await objects(`fill${round}`, 8);
    await ok(ws, "putObjects", { objects: batch });
    held.push(...batch);
  }
  return held;
}

describe("a workspace at its storage cap", () => {
  it("says its used bytes and cap in stats", async () => {
    const ws = freshWorkspace();
    const s = await storage(ws);
    expect(s.capBytes).toBe(CAP);
    expect(s.usedBytes).toBeGreaterThan(0);
    expect(s.usedBytes).toBeLessThan(MiB);
  });

  it("refuses an upload and a push of new bytes past it with workspace_full, storing nothing", async () => {
    const ws = freshWorkspace();
    const held = await fill(ws);
    const host = new TestHost(ws);
    const [first] = held as [ObjectBlob];
    await host.push([
      { kind: "file", path: "kept", mode: 0o644, mtime: 1, size: first.bytes.byteLength, chunks: [first.hash] },
    ]);
    const before = await storage(ws);
    const rev = (await ws.stats()).rev;
    const extra = await objects("extra", 10);

    const upload = await refused(ws, "putObjects", body({ objects: extra }));
    expect(upload.status).toBe(507);
    expect(upload.error).toMatchObject({ code: "workspace_full", usedBytes: before.usedBytes, capBytes: CAP });
    expect(upload.error.addingBytes).toBe(extra.reduce((n, o) => n + o.bytes.byteLength, 0));

    const [one] = extra as [ObjectBlob];
    const entry = {
      kind: "file",
      path: "new",
      mode: 0o644,
      mtime: 1,
      size: one.bytes.byteLength,
      chunks: [one.hash],
    } as const;
    const push = await refused(ws, "push", body(host.packRequest([entry], extra)));
    expect(push.status).toBe(507);
    expect(push.error.code).toBe("workspace_full");

    // Nothing of either was stored: not the objects, not the entry, not a rev.
    expect(await storage(ws)).toEqual(before);
    expect((await ws.stats()).rev).toBe(rev);
    const has = await ok(ws, "has", { hashes: joinHashes(extra.map((o) => o.hash)) });
    expect([...has.have]).toEqual(extra.map(() => 0));
  });

  it("still takes what brings no new bytes: held objects, entries naming them, deletions", async () => {
    const ws = freshWorkspace();
    const held = await fill(ws);
    await refused(ws, "putObjects", body({ objects: await objects("over", 10) }));
    const host = new TestHost(ws);

    expect(await ok(ws, "putObjects", { objects: held.slice(0, 8) })).toEqual({ stored: 0, present: 8 });
    const files = held.map((o, i) => ({
      kind: "file" as const,
      path: `f${i}`,
      mode: 0o644,
      mtime: 1,
      size: o.bytes.byteLength,
      chunks: [o.hash],
    }));
    expect((await host.push(files)).applied).toBe(true);
    expect((await host.push(files.map((f) => gone(f.path)))).applied).toBe(true);
  });
});
