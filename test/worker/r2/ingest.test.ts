/**
 * objects/put with R2 bound (worker/r2/upload-route.ts, PROTOCOL.md §7.9):
 * the Worker verifies, writes packs to R2 under the workspace's prefix, and
 * only then has the object record them; downloads and `has` see them.
 */
import { describe, expect, it } from "vitest";
import { joinHashes, sha256, toHex } from "../../../protocol/hash.ts";
import { readPackHeader } from "../../../worker/r2/pack-format.ts";
import { R2_PACK_BYTES } from "../../../worker/sync/r2-ingest.ts";
import { bucket, call, freshName, getJson, keysOf, MiB, objects, rows } from "./support.ts";

describe("an upload with R2 bound", () => {
  it("writes its chunks to one pack named by its SHA-256, which the index then names", async () => {
    const ws = freshName();
    const [tiny, ...big] = [...(await objects(1, 40)), ...(await objects(3, 100_000))];
    const upload = [tiny, ...big].map((o) => o as { hash: Uint8Array; bytes: Uint8Array });
    expect(await call(ws, "putObjects", { objects: upload })).toEqual({
      status: 200,
      body: { stored: 4, present: 0 },
    });
    const keys = await keysOf(ws);
    expect(keys).toHaveLength(1);
    const pack = await bucket().get(keys[0] as string);
    const bytes = new Uint8Array(await (pack as R2ObjectBody).arrayBuffer());
    // Under the prefix of the workspace's history (its epoch), named by its own SHA-256.
    const { epoch } = (await getJson(ws, "stats")).body as { epoch: string };
    expect(keys[0]).toBe(`ws/${ws}/${epoch}/${toHex(await sha256(bytes))}`);
    const members = readPackHeader(bytes, bytes.byteLength);
    expect(members?.map((m) => toHex(m.hash))).toEqual(big.map((o) => toHex(o.hash)));

    const packs = await rows<{ r2_key: string; size: number; has_bytes: number; state: string }>(
      ws,
      `SELECT r2_key, size, bytes IS NOT NULL AS has_bytes, state FROM packs`,
    );
    expect(packs).toEqual([{ r2_key: keys[0], size: bytes.byteLength, has_bytes: 0, state: "live" }]);
    // The tiny chunk is in its index row, as without R2 (worker/sync/packs.ts INLINE_BYTES).
    const inline = await rows<{ n: number }>(ws, `SELECT count(*) AS n FROM objects WHERE pack IS NULL`);
    expect(inline).toEqual([{ n: 1 }]);

    const got = await call(ws, "getObjects", { hashes: [...big, tiny].map((o) => o?.hash) });
    expect(got.status).toBe(200);
    const answer = got.body as { objects: { hash: Uint8Array; bytes: Uint8Array }[]; missing: Uint8Array };
    expect(answer.objects.map((o) => toHex(o.hash))).toEqual([...big, tiny].map((o) => toHex(o?.hash as Uint8Array)));
    for (const [i, o] of answer.objects.entries()) {
      expect(toHex(await sha256(o.bytes))).toBe(toHex([...big, tiny][i]?.hash as Uint8Array));
    }
    const unknown = (await objects(1, 10)).map((o) => o.hash);
    const has = await call(ws, "has", { hashes: joinHashes([...big.map((o) => o.hash), ...unknown]) });
    expect(has.body).toEqual({ have: new Uint8Array([1, 1, 1, 0]) });
  });

  it("puts a full upload of several MiB in one pack, no chunk split", async () => {
    const ws = freshName();
    const upload = await objects(7, MiB - 100);
    expect((await call(ws, "putObjects", { objects: upload })).body).toEqual({ stored: 7, present: 0 });
    const sizes = (await rows<{ size: number }>(ws, `SELECT size FROM packs ORDER BY id`)).map((r) => r.size);
    expect(sizes).toHaveLength(1);
    expect(sizes[0]).toBeGreaterThan(7 * (MiB - 100));
    expect(sizes[0]).toBeLessThanOrEqual(R2_PACK_BYTES);
    expect(await keysOf(ws)).toHaveLength(1);
  });

  it("refuses a chunk that is not its hash with hash_mismatch, writing nothing to R2 or the index", async () => {
    const ws = freshName();
    const [good, bad] = await objects(2, 5000);
    const forged = { hash: (bad as { hash: Uint8Array }).hash, bytes: new Uint8Array(5000).fill(1) };
    const res = await call(ws, "putObjects", { objects: [good, forged] });
    expect(res.status).toBe(422);
    expect((res.body as { error: { code: string } }).error.code).toBe("hash_mismatch");
    expect(await keysOf(ws)).toEqual([]);
    expect(await rows(ws, `SELECT hash FROM objects`)).toEqual([]);
  });

  it("records nothing twice when an upload is retried, before or after its pack reached R2", async () => {
    const ws = freshName();
    const upload = await objects(3, 20_000);
    expect((await call(ws, "putObjects", { objects: upload })).body).toEqual({ stored: 3, present: 0 });
    expect((await call(ws, "putObjects", { objects: upload })).body).toEqual({ stored: 0, present: 3 });
    expect(await keysOf(ws)).toHaveLength(1);
    expect(await rows(ws, `SELECT id FROM packs`)).toHaveLength(1);
  });
});
