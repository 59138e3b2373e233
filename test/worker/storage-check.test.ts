/**
 * The storage check (`GET …/check`, worker/sync/check.ts): a pack removed,
 * cut short or altered behind ferry's back, and an inline object altered,
 * are each named; a healthy workspace has no problems.
 */
import { env, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { CheckPage } from "../../protocol/check.ts";
import { sha256, toHex } from "../../protocol/hash.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";
import { signToken } from "../../protocol/token.ts";
import type { WorkspaceObject } from "../../worker/do/workspace.ts";
import { ok, type Workspace } from "./helpers.ts";

let counter = 0;

async function object(tag: string, size: number): Promise<ObjectBlob> {
  const bytes = new Uint8Array(size).fill(size % 251);
  bytes.set(new TextEncoder().encode(tag).subarray(0, size));
  return { hash: await sha256(bytes), bytes };
}

/** A workspace holding two packed objects sharing a pack, one alone in its pack, and one inline. */
async function stocked(): Promise<{
  name: string;
  ws: Workspace;
  packed: ObjectBlob[];
  solo: ObjectBlob;
  tiny: ObjectBlob;
}> {
  const name = `check-${Date.now()}-${counter++}`;
  const ws = env.WORKSPACE.get(env.WORKSPACE.idFromName(name));
  const packed = [await object(`a ${name}`, 1000), await object(`b ${name}`, 2000)];
  const solo = await object(`solo ${name}`, 300 * 1024);
  const tiny = await object(`t ${name}`, 20);
  await ok(ws, "putObjects", { objects: [...packed, solo, tiny] });
  return { name, ws, packed, solo, tiny };
}

async function check(
  name: string,
  query = "",
): Promise<{ status: number; body: CheckPage & { error?: { code: string } } }> {
  const token = signToken(
    { ws: name, rights: "r", exp: Math.floor(Date.now() / 1000) + 600 },
    env.FERRY_SECRET as string,
  );
  const res = await SELF.fetch(`http://ferry.test/v1/workspaces/${name}/check${query}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: res.status, body: await res.json() };
}

/** Runs SQL in the object, behind ferry's back. */
function tamper(ws: Workspace, sql: string, ...params: (number | Uint8Array)[]): Promise<void> {
  return runInDurableObject(ws, (instance: WorkspaceObject) => {
    instance.db.exec(sql, ...params);
  });
}

function packOf(ws: Workspace, o: ObjectBlob): Promise<number> {
  return runInDurableObject(
    ws,
    (instance: WorkspaceObject) =>
      instance.db.exec<{ pack: number }>(`SELECT pack FROM objects WHERE hash = ?`, o.hash).rows[0]?.pack as number,
  );
}

describe("the storage check", () => {
  it("finds nothing wrong in a healthy workspace, shallow or deep, with a read token", async () => {
    const { name } = await stocked();
    for (const query of ["", "?deep=1"]) {
      const { status, body } = await check(name, query);
      expect(status).toBe(200);
      expect(body).toMatchObject({ workspace: name, objects: 4, packs: 2, problems: [], next: null });
    }
    expect((await check(name, "?deep=1")).body.hashedBytes).toBe(1000 + 2000 + 300 * 1024 + 20);
  });

  it("names every object of a pack removed behind its back", async () => {
    const { name, ws, packed } = await stocked();
    const pack = await packOf(ws, packed[0] as ObjectBlob);
    await tamper(ws, `DELETE FROM packs WHERE id = ?`, pack);
    const { body } = await check(name);
    expect(body.problems).toEqual(
      expect.arrayContaining(packed.map((o) => ({ kind: "pack_missing", hash: toHex(o.hash), pack }))),
    );
    expect(body.problems).toHaveLength(2);
  });

  it("names an object its pack was cut short under", async () => {
    const { name, ws, solo } = await stocked();
    const pack = await packOf(ws, solo);
    await tamper(ws, `UPDATE packs SET bytes = substr(bytes, 1, 1000) WHERE id = ?`, pack);
    expect((await check(name)).body.problems).toEqual([{ kind: "pack_short", hash: toHex(solo.hash), pack }]);
  });

  it("finds altered bytes only when deep: in a pack, and inline", async () => {
    const { name, ws, packed, tiny } = await stocked();
    const second = packed[1] as ObjectBlob;
    const pack = await packOf(ws, second);
    // One byte of the second object, same length: the index still fits.
    await runInDurableObject(ws, (instance: WorkspaceObject) => {
      const row = instance.db.exec<{ bytes: Uint8Array }>(`SELECT bytes FROM packs WHERE id = ?`, pack).rows[0];
      const bytes = (row as { bytes: Uint8Array }).bytes.slice();
      bytes[1500] = 0xff;
      instance.db.exec(`UPDATE packs SET bytes = ? WHERE id = ?`, bytes, pack);
    });
    await tamper(ws, `UPDATE objects SET bytes = ? WHERE hash = ?`, new Uint8Array(20), tiny.hash);
    expect((await check(name)).body.problems).toEqual([]);
    const deep = (await check(name, "?deep=1")).body.problems;
    expect(deep).toEqual(
      expect.arrayContaining([
        { kind: "hash_mismatch", hash: toHex(second.hash), pack },
        { kind: "hash_mismatch", hash: toHex(tiny.hash) },
      ]),
    );
    expect(deep).toHaveLength(2);
  });

  it("names an inline object whose bytes are not its recorded size", async () => {
    const { name, ws, tiny } = await stocked();
    await tamper(ws, `UPDATE objects SET bytes = ? WHERE hash = ?`, new Uint8Array(7), tiny.hash);
    expect((await check(name)).body.problems).toEqual([{ kind: "length_mismatch", hash: toHex(tiny.hash) }]);
  });

  it("refuses a bad query with bad_request and no token with unauthorized", async () => {
    const { name } = await stocked();
    const bad = await check(name, "?deep=yes");
    expect(bad.status).toBe(400);
    expect(bad.body.error?.code).toBe("bad_request");
    const res = await SELF.fetch(`http://ferry.test/v1/workspaces/${name}/check`);
    expect(res.status).toBe(401);
  });
});
