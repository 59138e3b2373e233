/** The R2 mode's tests (vitest.worker.config.ts project workerd-r2): HTTP through the Worker, the bucket, the object's tables. */
import { env, runInDurableObject, SELF } from "cloudflare:test";
import { CBOR_CONTENT_TYPE, decodeCbor } from "../../../protocol/cbor.ts";
import { sha256 } from "../../../protocol/hash.ts";
import type { ObjectBlob } from "../../../protocol/objects.ts";
import { encodeRequest, type OpName } from "../../../protocol/ops.ts";
import type { PushRequest } from "../../../protocol/push.ts";
import { signToken } from "../../../protocol/token.ts";
import type { WorkspaceObject } from "../../../worker/do/workspace.ts";
import { packPrefix } from "../../../worker/r2/bucket-store.ts";
import type { Row, SqlValue } from "../../../worker/sync/db.ts";

export const MiB = 1024 * 1024;

export function bucket(): R2Bucket {
  const packs = (env as { PACKS?: R2Bucket }).PACKS;
  if (packs === undefined) throw new Error("this project binds PACKS (vitest.worker.config.ts)");
  return packs;
}

/** A workspace name no other test uses. */
export function freshName(): string {
  return `r2-${crypto.randomUUID()}`;
}

export function stubOf(ws: string): DurableObjectStub<WorkspaceObject> {
  return env.WORKSPACE.get(env.WORKSPACE.idFromName(ws));
}

function token(ws: string): string {
  return signToken({ ws, rights: "rw", exp: Math.floor(Date.now() / 1000) + 600 }, env.FERRY_SECRET as string);
}

/** `op` over HTTP through the Worker, as a host calls it: its status and decoded body. */
export async function call(ws: string, op: OpName, request: unknown): Promise<{ status: number; body: unknown }> {
  const route = { putObjects: "objects", getObjects: "objects/get" }[op as string] ?? op;
  const res = await SELF.fetch(`http://ferry.test/v1/workspaces/${ws}/${route}`, {
    method: "POST",
    headers: { "content-type": CBOR_CONTENT_TYPE, authorization: `Bearer ${token(ws)}` },
    // biome-ignore lint/suspicious/noExplicitAny: the test passes wire-shaped requests of every op
    body: encodeRequest(op, request as any),
  });
  return { status: res.status, body: decodeCbor(new Uint8Array(await res.arrayBuffer())) };
}

/** GET a JSON route of the workspace (stats, check) through the Worker. */
export async function getJson(ws: string, route: string): Promise<{ status: number; body: unknown }> {
  const res = await SELF.fetch(`http://ferry.test/v1/workspaces/${ws}/${route}`, {
    headers: { authorization: `Bearer ${token(ws)}` },
  });
  return { status: res.status, body: await res.json() };
}

/** The first push of `hostId`: one file `a.bin` of `object`, carried inline. */
export function pushOfOne(hostId: Uint8Array, object: ObjectBlob): PushRequest {
  return {
    hostId,
    start: { rev: 0, path: null },
    end: { rev: 1, path: null },
    entries: [
      { kind: "file", path: "a.bin", mode: 0o644, mtime: 1, size: object.bytes.byteLength, chunks: object.hash },
    ],
    objects: [object],
  };
}

/** `count` distinct objects of `size` bytes. */
export async function objects(count: number, size: number): Promise<ObjectBlob[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const bytes = new Uint8Array(size);
      crypto.getRandomValues(bytes.subarray(0, Math.min(size, 65536)));
      return { hash: await sha256(bytes), bytes };
    }),
  );
}

/** The workspace's keys in the bucket. */
export async function keysOf(ws: string): Promise<string[]> {
  const listed = await bucket().list({ prefix: packPrefix(ws) });
  return listed.objects.map((o) => o.key);
}

/** Rows of the object's SQLite, read inside it. */
export function rows<T extends Row>(ws: string, sql: string, ...params: SqlValue[]): Promise<T[]> {
  return runInDurableObject(stubOf(ws), (o: WorkspaceObject) => {
    // A workspace never written has no tables yet (worker/do/creation.ts): made first, as by a write.
    o.creation.create();
    return o.db.exec<T>(sql, ...params).rows;
  });
}
