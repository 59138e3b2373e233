/**
 * Bytes, then index, then rev (PROTOCOL.md §7.9): an upload whose second
 * pack R2 refuses records none of its chunks, so `has` and objects/get
 * do not see them and a push naming them is refused; the pack R2 took is
 * an orphan nothing names (the collector's listing of the prefix finds it).
 */
import { describe, expect, it } from "vitest";
import { joinHashes, sha256, toHex } from "../../../protocol/hash.ts";
import { PROTOCOL_VERSION } from "../../../protocol/version.ts";
import { writePack } from "../../../worker/r2/pack-format.ts";
import { R2_PACK_BYTES } from "../../../worker/sync/r2-ingest.ts";
import { bucket, call, freshName, getJson, keysOf, MiB, objects, rows } from "./support.ts";

describe("an upload whose packs R2 takes only in part", () => {
  it("leaves nothing visible: no index row, no has, no download, and a push naming its chunks is refused", async () => {
    const ws = freshName();
    const upload = await objects(7, MiB - 100);
    // The ingest packs in request order up to R2_PACK_BYTES (4 MiB): the first four, then the last three.
    // Someone else's bytes under the second pack's name make R2's create-only condition refuse its put.
    expect(R2_PACK_BYTES).toBe(4 * MiB);
    const second = writePack(upload.slice(4)).bytes;
    const { epoch } = (await getJson(ws, "stats")).body as { epoch: string };
    const secondKey = `ws/${ws}/${epoch}/${toHex(await sha256(second))}`;
    await bucket().put(secondKey, new Uint8Array([1, 2, 3]));

    const res = await call(ws, "putObjects", { objects: upload });
    expect(res.status).toBe(503);
    expect((res.body as { error: { code: string } }).error.code).toBe("unavailable");

    expect(await rows(ws, `SELECT hash FROM objects`)).toEqual([]);
    expect(await rows(ws, `SELECT id FROM packs`)).toEqual([]);
    const hashes = upload.map((o) => o.hash);
    expect((await call(ws, "has", { hashes: joinHashes(hashes) })).body).toEqual({ have: new Uint8Array(7) });
    const got = (await call(ws, "getObjects", { hashes })).body as { objects: unknown[]; missing: Uint8Array };
    expect(got.objects).toEqual([]);
    // The first pack is in R2, named by nothing; the bytes under the second name are still not ours.
    expect((await keysOf(ws)).sort()).toHaveLength(2);
    expect(await (await bucket().get(secondKey))?.arrayBuffer()).toEqual(new Uint8Array([1, 2, 3]).buffer);

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
