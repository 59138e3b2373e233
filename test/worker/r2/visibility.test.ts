/**
 * Bytes, then index, then rev (PROTOCOL.md §7.9): an upload whose pack
 * R2 refuses records none of its chunks, so `has` and objects/get do not
 * see them and a push naming them is refused. (Before bodies held at most
 * 8 MiB, an upload made two or three packs, and R2 could take some: those
 * were orphans nothing named, which the collector's listing finds.)
 */
import { describe, expect, it } from "vitest";
import { joinHashes, sha256, toHex } from "../../../protocol/hash.ts";
import { PROTOCOL_VERSION } from "../../../protocol/version.ts";
import { writePack } from "../../../worker/r2/pack-format.ts";
import { R2_PACK_BYTES } from "../../../worker/sync/r2-ingest.ts";
import { bucket, call, freshName, getJson, keysOf, MiB, objects, rows } from "./support.ts";

describe("an upload whose pack R2 refuses", () => {
  it("leaves nothing visible: no index row, no has, no download, and a push naming its chunks is refused", async () => {
    const ws = freshName();
    const upload = await objects(7, MiB - 100);
    // One pack, in request order (R2_PACK_BYTES holds a body's objects). Someone else's bytes under its
    // name make R2's create-only condition refuse its put.
    expect(7 * MiB).toBeLessThanOrEqual(R2_PACK_BYTES);
    const pack = writePack(upload).bytes;
    const { epoch } = (await getJson(ws, "stats")).body as { epoch: string };
    const packKey = `ws/${ws}/${epoch}/${toHex(await sha256(pack))}`;
    await bucket().put(packKey, new Uint8Array([1, 2, 3]));

    const res = await call(ws, "putObjects", { objects: upload });
    expect(res.status).toBe(503);
    expect((res.body as { error: { code: string } }).error.code).toBe("unavailable");

    expect(await rows(ws, `SELECT hash FROM objects`)).toEqual([]);
    expect(await rows(ws, `SELECT id FROM packs`)).toEqual([]);
    const hashes = upload.map((o) => o.hash);
    expect((await call(ws, "has", { hashes: joinHashes(hashes) })).body).toEqual({ have: new Uint8Array(7) });
    const got = (await call(ws, "getObjects", { hashes })).body as { objects: unknown[]; missing: Uint8Array };
    expect(got.objects).toEqual([]);
    // Nothing of ours is in R2; the bytes under the pack's name are still someone else's.
    expect(await keysOf(ws)).toEqual([packKey]);
    expect(await (await bucket().get(packKey))?.arrayBuffer()).toEqual(new Uint8Array([1, 2, 3]).buffer);

    const hostId = new Uint8Array(16).fill(9);
    await call(ws, "hello", { version: PROTOCOL_VERSION, hostId, hostRev: 0 });
    const first = upload[0] as { hash: Uint8Array; bytes: Uint8Array };
    const push = await call(ws, "push", {
      hostId,
      start: { rev: 0, path: null },
      end: { rev: 1, path: null },
      entries: [
        {
          kind: "file",
          path: "a.bin",
          mode: 0o644,
          mtime: 1,
          size: first.bytes.byteLength,
          chunks: first.hash,
          base: 0,
        },
      ],
      objects: [],
    });
    expect((push.body as { error: { code: string } }).error.code).toBe("missing_objects");
    expect(await rows(ws, `SELECT path FROM entries`)).toEqual([]);
  });
});
