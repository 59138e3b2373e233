/**
 * Packs in R2 damaged behind ferry's back (deleted from the bucket, or
 * replaced by bytes cut short): a download through the Worker answers the
 * lost objects missing, never a fault, and the object forgets them
 * (worker/sync/damaged.ts), as the check does; `has` then answers them
 * missing, and an upload of them (a host's `ferry push --heal`) writes
 * their pack again under its name: check clean, the bytes served again.
 */
import { describe, expect, it } from "vitest";
import { joinHashes, toHex } from "../../../protocol/hash.ts";
import type { ObjectBlob } from "../../../protocol/objects.ts";
import { bucket, call, freshName, getJson, keysOf, objects } from "./support.ts";

type Got = { objects: { hash: Uint8Array; bytes: Uint8Array }[]; missing: Uint8Array[] };
type Problems = { problems: { kind: string; hash: string }[] };

async function uploaded(ws: string): Promise<{ upload: ObjectBlob[]; key: string }> {
  const upload = await objects(2, 40_000);
  expect((await call(ws, "putObjects", { objects: upload })).status).toBe(200);
  const keys = await keysOf(ws);
  expect(keys).toHaveLength(1);
  return { upload, key: keys[0] as string };
}

const hexes = (list: readonly { hash: Uint8Array }[] | readonly Uint8Array[]) =>
  list.map((h) => toHex(h instanceof Uint8Array ? h : h.hash)).sort();

const TAMPERS: Record<string, (key: string) => Promise<unknown>> = {
  "deleted from the bucket": (key) => bucket().delete(key),
  "cut short in the bucket": async (key) => {
    const bytes = new Uint8Array(await ((await bucket().get(key)) as R2ObjectBody).arrayBuffer());
    await bucket().put(key, bytes.subarray(0, 1000));
  },
};

describe("a pack in R2 damaged behind ferry's back", () => {
  for (const [how, tamper] of Object.entries(TAMPERS)) {
    it(`is answered missing by a download when ${how}, forgotten, and written again by an upload`, async () => {
      const ws = freshName();
      const { upload, key } = await uploaded(ws);
      await tamper(key);
      const asked = joinHashes(upload.map((o) => o.hash));
      const got = await call(ws, "getObjects", { hashes: upload.map((o) => o.hash) });
      expect(got.status).toBe(200);
      expect((got.body as Got).objects).toEqual([]);
      expect(hexes((got.body as Got).missing)).toEqual(hexes(upload));
      expect([...((await call(ws, "has", { hashes: asked })).body as { have: Uint8Array }).have]).toEqual([0, 0]);
      const lost = (await getJson(ws, "check?deep=0")).body as Problems;
      expect(lost.problems.map((p) => p.kind)).toEqual(["lost", "lost"]);

      if (how === "cut short in the bucket") {
        // Bytes R2 did not record as this pack (put without its SHA-256): not ferry's to overwrite.
        const refused = await call(ws, "putObjects", { objects: upload });
        expect([refused.status, (refused.body as { error: { key: string } }).error.key]).toEqual([503, key]);
        await bucket().delete(key);
      }
      expect((await call(ws, "putObjects", { objects: upload })).status).toBe(200);
      expect(await keysOf(ws)).toEqual([key]);
      expect(((await getJson(ws, "check?deep=1")).body as Problems).problems).toEqual([]);
      const again = (await call(ws, "getObjects", { hashes: upload.map((o) => o.hash) })).body as Got;
      expect(hexes(again.objects)).toEqual(hexes(upload));
      for (const o of again.objects) {
        expect(o.bytes).toEqual(upload.find((u) => toHex(u.hash) === toHex(o.hash))?.bytes);
      }
    });
  }
});
