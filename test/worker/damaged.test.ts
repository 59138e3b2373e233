/**
 * Packs in the object's SQLite damaged behind ferry's back (a pack row
 * deleted or cut short): a read answers the lost objects missing, never a
 * fault, and forgets them (worker/sync/damaged.ts), as the check does; the
 * file route answers `object_damaged` naming the path; `has` then answers
 * them missing, and an upload of them (a host's `ferry push --heal`) makes
 * the workspace whole: check clean, the bytes served again.
 */
import { env, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { CheckPage } from "../../protocol/check.ts";
import { joinHashes, sha256, toHex } from "../../protocol/hash.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";
import { signToken } from "../../protocol/token.ts";
import type { WorkspaceObject } from "../../worker/do/workspace.ts";
import { collect, KEEP_NOTHING } from "./gc-support.ts";
import { ok, randomId, type Workspace } from "./helpers.ts";

async function object(tag: string, size: number): Promise<ObjectBlob> {
  const bytes = new Uint8Array(size).fill(size % 251);
  bytes.set(new TextEncoder().encode(tag));
  return { hash: await sha256(bytes), bytes };
}

/** A workspace with `lost.bin` (one object alone in its pack) and `kept.bin` (in another pack), pushed. */
async function stocked(): Promise<{ name: string; ws: Workspace; lost: ObjectBlob; kept: ObjectBlob; pack: number }> {
  const name = `damaged-${crypto.randomUUID()}`;
  const ws = env.WORKSPACE.get(env.WORKSPACE.idFromName(name));
  const lost = await object(`lost ${name}`, 300 * 1024);
  const kept = await object(`kept ${name}`, 2000);
  await ok(ws, "putObjects", { objects: [lost, kept] });
  const file = (path: string, o: ObjectBlob) => ({
    kind: "file",
    path,
    mode: 0o644,
    mtime: 1,
    size: o.bytes.byteLength,
    chunks: o.hash,
  });
  await ok(ws, "push", {
    hostId: randomId(),
    start: { rev: 0, path: null },
    end: { rev: 1, path: null },
    entries: [file("kept.bin", kept), file("lost.bin", lost)],
  });
  const pack = await runInDurableObject(
    ws,
    (o: WorkspaceObject) =>
      o.db.exec<{ pack: number }>(`SELECT pack FROM objects WHERE hash = ?`, lost.hash).rows[0]?.pack as number,
  );
  return { name, ws, lost, kept, pack };
}

function token(name: string): string {
  return signToken({ ws: name, rights: "r", exp: Math.floor(Date.now() / 1000) + 600 }, env.FERRY_SECRET as string);
}

async function check(name: string, deep = false): Promise<CheckPage> {
  const res = await SELF.fetch(`http://ferry.test/v1/workspaces/${name}/check?deep=${deep ? 1 : 0}`, {
    headers: { authorization: `Bearer ${token(name)}` },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as CheckPage;
}

function readFile(name: string, path: string): Promise<Response> {
  return SELF.fetch(`http://ferry.test/v1/workspaces/${name}/file?path=${path}`, {
    headers: { authorization: `Bearer ${token(name)}` },
  });
}

const TAMPERS = {
  deleted: `DELETE FROM packs WHERE id = ?`,
  "cut short": `UPDATE packs SET bytes = substr(bytes, 1, 1000) WHERE id = ?`,
} as const;

describe("a pack in SQLite damaged behind ferry's back", () => {
  for (const [how, sql] of Object.entries(TAMPERS)) {
    it(`is answered missing by objects/get when ${how}, forgotten, and whole again once uploaded`, async () => {
      const { name, ws, lost, kept, pack } = await stocked();
      await runInDurableObject(ws, (o: WorkspaceObject) => {
        o.db.exec(sql, pack);
      });
      const got = await ok(ws, "getObjects", { hashes: joinHashes([lost.hash, kept.hash]) });
      expect(got.objects.map((o) => toHex(o.hash))).toEqual([toHex(kept.hash)]);
      expect(got.missing.map(toHex)).toEqual([toHex(lost.hash)]);
      expect([...(await ok(ws, "has", { hashes: joinHashes([lost.hash, kept.hash]) })).have]).toEqual([0, 1]);
      expect((await check(name)).problems).toEqual([{ kind: "lost", hash: toHex(lost.hash) }]);

      const refused = await readFile(name, "lost.bin");
      expect(refused.status).toBe(410);
      expect(await refused.json()).toMatchObject({ error: { code: "object_damaged", path: "lost.bin" } });
      expect((await readFile(name, "kept.bin")).status).toBe(200);

      await ok(ws, "putObjects", { objects: [lost] });
      expect((await check(name, true)).problems).toEqual([]);
      const served = await readFile(name, "lost.bin");
      expect(served.status).toBe(200);
      expect(new Uint8Array(await served.arrayBuffer())).toEqual(lost.bytes);
    });
  }

  it("stops being named once nothing retained names it (the collector drops it)", async () => {
    const { name, ws, lost, pack } = await stocked();
    await runInDurableObject(ws, (o: WorkspaceObject) => {
      o.db.exec(TAMPERS.deleted, pack);
    });
    await check(name);
    expect((await check(name)).problems).toEqual([{ kind: "lost", hash: toHex(lost.hash) }]);
    await collect(ws, KEEP_NOTHING);
    expect((await check(name)).problems).toEqual([{ kind: "lost", hash: toHex(lost.hash) }]);
    await ok(ws, "push", {
      hostId: randomId(),
      start: { rev: 0, path: null },
      end: { rev: 1, path: null },
      entries: [{ kind: "gone", path: "lost.bin" }],
    });
    await collect(ws, KEEP_NOTHING);
    expect((await check(name)).problems).toEqual([]);
  });

  it("is forgotten by the check that finds it, so has answers it missing", async () => {
    const { name, ws, lost, pack } = await stocked();
    await runInDurableObject(ws, (o: WorkspaceObject) => {
      o.db.exec(TAMPERS["cut short"], pack);
    });
    expect((await check(name)).problems).toEqual([{ kind: "pack_short", hash: toHex(lost.hash), pack }]);
    expect([...(await ok(ws, "has", { hashes: lost.hash })).have]).toEqual([0]);
    expect((await check(name)).problems).toEqual([{ kind: "lost", hash: toHex(lost.hash) }]);
    await ok(ws, "putObjects", { objects: [lost] });
    expect((await check(name, true)).problems).toEqual([]);
  });
});
