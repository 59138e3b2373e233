/**
 * The object reads a large declared request body into a buffer it reuses
 * (worker/do/body-buffers.ts) rather than a fresh, zero-filled one: every
 * upload through a reused buffer still stores exactly its own bytes, bad
 * input through it changes nothing stored, and a body that passes the limit
 * or is cut short is refused.
 */
import { env, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CBOR_CONTENT_TYPE, decodeCbor, encodeCbor } from "../../protocol/cbor.ts";
import { joinHashes, sha256, toHex } from "../../protocol/hash.ts";
import { LIMITS } from "../../protocol/limits.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";
import { signToken } from "../../protocol/token.ts";
import { POOLED_FROM_BYTES } from "../../worker/do/body-buffers.ts";
import type { WorkspaceObject } from "../../worker/do/workspace.ts";
import { freshWorkspace } from "./helpers.ts";

const BASE = "http://ferry.test/v1/workspaces";
const MiB = 1024 * 1024;

/** `count` objects of `size` random bytes each. */
async function randomObjects(count: number, size: number): Promise<ObjectBlob[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const bytes = new Uint8Array(size);
      for (let at = 0; at < size; at += 65536) crypto.getRandomValues(bytes.subarray(at, at + 65536));
      return { hash: await sha256(bytes), bytes };
    }),
  );
}

/** POSTs a CBOR body to one operation of workspace `ws` through the Worker, with a read-write token. */
async function post(ws: string, route: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const token = signToken({ ws, rights: "rw", exp: Math.floor(Date.now() / 1000) + 600 }, env.FERRY_SECRET as string);
  const res = await SELF.fetch(`${BASE}/${ws}/${route}`, {
    method: "POST",
    headers: { "content-type": CBOR_CONTENT_TYPE, authorization: `Bearer ${token}` },
    body: encodeCbor(body),
  });
  return { status: res.status, body: decodeCbor(new Uint8Array(await res.arrayBuffer())) };
}

/**
 * The SHA-256 (hex) of each object's bytes as the workspace serves them back,
 * in order (objects/get answers in bounded parts). Hashes, not the bytes: a
 * deep comparison of megabytes in the test runner takes minutes.
 */
async function servedHashes(ws: string, objects: readonly ObjectBlob[]): Promise<string[]> {
  const out: string[] = [];
  while (out.length < objects.length) {
    const res = await post(ws, "objects/get", { hashes: joinHashes(objects.slice(out.length).map((o) => o.hash)) });
    expect(res.status).toBe(200);
    const got = (res.body as { objects: ObjectBlob[] }).objects;
    expect(got.length).toBeGreaterThan(0);
    for (const o of got) out.push(toHex(await sha256(new Uint8Array(o.bytes))));
  }
  return out;
}

const hashesOf = (objects: readonly ObjectBlob[]) => objects.map((o) => toHex(o.hash));

function idleBuffers(ws: string): Promise<number> {
  const stub = env.WORKSPACE.get(env.WORKSPACE.idFromName(ws));
  return runInDurableObject(stub, (instance: WorkspaceObject) => instance.bodyBuffers.idleCount);
}

/** A byte stream of `total` zero bytes in 64 KiB reads, failing after `failAfter` bytes when given. */
function zeros(total: number, failAfter?: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    type: "bytes",
    pull(controller) {
      if (failAfter !== undefined && sent >= failAfter) return controller.error(new Error("Network connection lost."));
      if (sent >= total) return controller.close();
      const n = Math.min(65536, total - sent);
      controller.enqueue(new Uint8Array(n));
      sent += n;
    },
  });
}

describe("request bodies read into reused buffers", () => {
  it("stores each upload's own bytes when two large uploads share one buffer", async () => {
    const ws = `buffers-${crypto.randomUUID()}`;
    const first = await randomObjects(5, MiB);
    const second = await randomObjects(9, MiB / 2 + 7);
    expect((await post(ws, "objects", { objects: first })).status).toBe(200);
    expect(await idleBuffers(ws)).toBe(1);
    expect((await post(ws, "objects", { objects: second })).status).toBe(200);
    expect(await idleBuffers(ws)).toBe(1);
    expect(await servedHashes(ws, first)).toEqual(hashesOf(first));
    expect(await servedHashes(ws, second)).toEqual(hashesOf(second));
  });

  it("refuses a large upload with a wrong hash and stores nothing, then stores the next one's bytes", async () => {
    const ws = `buffers-${crypto.randomUUID()}`;
    const [good, bad, ...more] = (await randomObjects(5, MiB)) as [ObjectBlob, ObjectBlob, ...ObjectBlob[]];
    const forged = { hash: good.hash, bytes: bad.bytes };
    const refused = await post(ws, "objects", { objects: [bad, ...more, forged] });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ error: { code: "hash_mismatch" } });
    const probe = await post(ws, "has", { hashes: joinHashes([good.hash, bad.hash]) });
    expect(new Uint8Array((probe.body as { have: Uint8Array }).have)).toEqual(new Uint8Array([0, 0]));
    expect((await post(ws, "objects", { objects: [good] })).status).toBe(200);
    expect(await servedHashes(ws, [good])).toEqual(hashesOf([good]));
  });

  it("refuses with payload_too_large a declared body that sends past the body limit", async () => {
    const res = await freshWorkspace().serve("putObjects", zeros(LIMITS.maxBodyBytes + 1), "rw", POOLED_FROM_BYTES);
    expect(res.status).toBe(413);
    expect(decodeCbor(new Uint8Array(await res.arrayBuffer()))).toMatchObject({
      error: { code: "payload_too_large" },
    });
  });

  it("answers bad_request for a declared body that fails part way", async () => {
    const res = await freshWorkspace().serve("putObjects", zeros(POOLED_FROM_BYTES, MiB), "rw", POOLED_FROM_BYTES);
    expect(res.status).toBe(400);
    expect(decodeCbor(new Uint8Array(await res.arrayBuffer()))).toMatchObject({ error: { code: "bad_request" } });
  });
});
