/**
 * The operator's side with R2 bound: health and stats say where new bytes
 * go; `DELETE /v1/workspaces/{ws}` deletes the workspace's prefix of the
 * bucket and nothing else; the storage cap counts the index alone.
 */
import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signToken } from "../../../protocol/token.ts";
import { call, freshName, getJson, keysOf, MiB, objects } from "./support.ts";

const CAP = 64 * MiB;

describe("a server with R2 bound", () => {
  it("says so in health and in a workspace's stats", async () => {
    const health = (await (await SELF.fetch("http://ferry.test/v1/health")).json()) as { packs: string };
    expect(health.packs).toBe("r2");
    const stats = (await getJson(freshName(), "stats")).body as { packs: string };
    expect(stats.packs).toBe("r2");
  });

  it("deletes the workspace's packs with it, and no other workspace's", async () => {
    const ws = freshName();
    const neighbour = `${ws}-b`;
    await call(ws, "putObjects", { objects: await objects(3, 50_000) });
    await call(ws, "putObjects", { objects: await objects(3, 50_000) });
    await call(neighbour, "putObjects", { objects: await objects(2, 50_000) });
    expect(await keysOf(ws)).toHaveLength(2);
    const token = signToken({ ws, rights: "rw", exp: Math.floor(Date.now() / 1000) + 600 }, env.FERRY_SECRET as string);
    const res = await SELF.fetch(`http://ferry.test/v1/workspaces/${ws}?confirm=${ws}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    expect(await keysOf(ws)).toEqual([]);
    expect(await keysOf(neighbour)).toHaveLength(1);
  });

  it("lets a workspace grow past the storage cap: only the index counts against it", async () => {
    const ws = freshName();
    // Eleven uploads of 7 MiB: 77 MiB of objects past the 64 MiB test cap (vitest.worker.config.ts),
    // refused workspace_full without R2 (test/worker/storage-cap.test.ts).
    for (let round = 0; round < 11; round++) {
      const res = await call(ws, "putObjects", { objects: await objects(7, MiB - 1024) });
      expect(res).toEqual({ status: 200, body: { stored: 7, present: 0 } });
    }
    const { storage } = (await getJson(ws, "stats")).body as {
      storage: { usedBytes: number; capBytes: number; objects: number; storedBytes: number };
    };
    expect(storage.capBytes).toBe(CAP);
    expect(storage.objects).toBe(77);
    expect(storage.storedBytes).toBeGreaterThan(CAP);
    expect(storage.usedBytes).toBeLessThan(MiB);
    // 77 MiB hashed and written on two shared cores: well past vitest's per-test default here.
  }, 120_000);
});
