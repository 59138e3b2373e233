/**
 * `GET …/check` with packs in R2 (worker/r2/check-packs.ts): every indexed
 * pack exists with its recorded length, and deep, every chunk re-hashes to
 * its name; a pack removed or altered behind ferry's back is named, each
 * object it was to hold with the pack's key.
 */
import { describe, expect, it } from "vitest";
import { toHex } from "../../../protocol/hash.ts";
import type { ObjectBlob } from "../../../protocol/objects.ts";
import { bucket, call, freshName, getJson, keysOf, objects } from "./support.ts";

type Page = {
  objects: number;
  packs: number;
  hashedBytes: number;
  problems: { kind: string; hash: string; pack?: number; key?: string }[];
  next: number | null;
};

/** Every page of the check, as `ferry workspace check` reads them. */
async function check(ws: string, deep: boolean): Promise<Page> {
  const pages: Page[] = [];
  for (let after: number | null = 0; after !== null; ) {
    const res = await getJson(ws, `check?deep=${deep ? 1 : 0}&after=${after}`);
    expect(res.status).toBe(200);
    const page = res.body as Page;
    pages.push(page);
    after = page.next;
  }
  const first = pages[0] as Page;
  return {
    ...first,
    hashedBytes: pages.reduce((n, p) => n + p.hashedBytes, 0),
    problems: pages.flatMap((p) => p.problems),
  };
}

async function uploaded(ws: string): Promise<{ upload: ObjectBlob[]; key: string }> {
  const upload = await objects(3, 40_000);
  expect((await call(ws, "putObjects", { objects: upload })).status).toBe(200);
  const keys = await keysOf(ws);
  expect(keys).toHaveLength(1);
  return { upload, key: keys[0] as string };
}

const named = (upload: readonly ObjectBlob[]) => upload.map((o) => toHex(o.hash)).sort();

describe("the storage check with packs in R2", () => {
  it("finds nothing wrong in a healthy workspace, shallow or deep", async () => {
    const ws = freshName();
    await uploaded(ws);
    expect((await check(ws, false)).problems).toEqual([]);
    const deep = await check(ws, true);
    expect(deep.problems).toEqual([]);
    expect(deep.hashedBytes).toBe(3 * 40_000);
  });

  it("names every object of a pack removed from the bucket, shallow and deep, then lost", async () => {
    for (const deep of [false, true]) {
      const ws = freshName();
      const { upload, key } = await uploaded(ws);
      await bucket().delete(key);
      const { problems } = await check(ws, deep);
      expect(problems.every((p) => p.kind === "pack_missing" && p.key === key)).toBe(true);
      expect(problems.map((p) => p.hash).sort()).toEqual(named(upload));
      // Forgotten once found: named lost from then on, until a host uploads them again.
      const again = await check(ws, deep);
      expect(again.problems.every((p) => p.kind === "lost")).toBe(true);
      expect(again.problems.map((p) => p.hash).sort()).toEqual(named(upload));
    }
  });

  it("finds a pack altered to another length shallow, and altered in place only deep", async () => {
    const ws = freshName();
    const { upload, key } = await uploaded(ws);
    const bytes = new Uint8Array(await ((await bucket().get(key)) as R2ObjectBody).arrayBuffer());
    const flipped = bytes.slice();
    flipped[bytes.byteLength - 10] = (flipped[bytes.byteLength - 10] as number) ^ 0xff;
    await bucket().put(key, flipped);
    expect((await check(ws, false)).problems).toEqual([]);
    const deep = await check(ws, true);
    expect(deep.problems).toEqual([
      { kind: "hash_mismatch", hash: toHex((upload[2] as ObjectBlob).hash), pack: expect.any(Number), key },
    ]);

    await bucket().put(key, bytes.subarray(0, bytes.byteLength - 1));
    const shallow = await check(ws, false);
    // The object the deep check found altered was forgotten then: named lost, the others pack_length.
    expect(shallow.problems.filter((p) => p.kind === "lost").map((p) => p.hash)).toEqual(
      named([upload[2] as ObjectBlob]),
    );
    expect(
      shallow.problems
        .filter((p) => p.kind === "pack_length")
        .map((p) => p.hash)
        .sort(),
    ).toEqual(named(upload.slice(0, 2)));
    expect(shallow.problems).toHaveLength(3);
  });
});
