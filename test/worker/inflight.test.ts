/**
 * The object holds a bounded number of request bytes at once, over every
 * HTTP body being read and what decoding it holds: past the bound a request
 * is answered 429 `rate_limited` with a retry hint, before its body is read
 * or before it is decoded (inflight.ts), and a body of more CBOR items than
 * maxBodyItems is refused before it is decoded (protocol/cbor-weight.ts).
 * The process keeps room past its bound for requests under half a body, and
 * a request that finds it full waits in line for its turn before it is refused.
 * Bodies of half a full one or more wait in a line of their own first, two
 * full bodies at a time (answer-room.ts), so the bounds are filled here with
 * bodies under it (FILLER).
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { decodeCbor, encodeCbor } from "../../protocol/cbor.ts";
import { sha256 } from "../../protocol/hash.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { getObjectsFields } from "../../protocol/objects.ts";
import { ANSWERS_AT_ONCE, BODIES_AT_ONCE, LARGE_BODY_BYTES } from "../../worker/do/answer-room.ts";
import {
  MAX_OBJECT_INFLIGHT_BYTES,
  MAX_PROCESS_INFLIGHT_BYTES,
  SMALL_REQUEST_ROOM,
  TINY_REQUEST_BYTES,
} from "../../worker/do/inflight.ts";
import type { WorkspaceObject } from "../../worker/do/workspace.ts";
import { freshWorkspace, helloRequest, randomId, type Workspace } from "./helpers.ts";

const MiB = 1024 * 1024;
/** A body declared under LARGE_BODY_BYTES, so that it waits in no line but the budgets', and that divides them. */
const FILLER = LARGE_BODY_BYTES / 2;

/**
 * A push of `files` entries each listing one chunk `chunks` times, as an
 * array (version 3's form, which a hostile client may still send): a 7.5 MB
 * body at 4 x 55,000, 220,000 32-byte byte strings. A push that is
 * decoded is refused for the form (unsupported_version).
 */
function pushOfLongLists(files: number, chunks: number): Uint8Array {
  const list = Array(chunks).fill(new Uint8Array(32).fill(1));
  const entries = Array.from({ length: files }, (_, i) => ({
    path: `f${i}`,
    kind: "file",
    mode: 0o644,
    mtime: 0,
    size: chunks,
    chunks: list,
  }));
  return encodeCbor({ hostId: randomId(), start: { rev: 0, path: null }, end: { rev: 1, path: null }, entries });
}

async function errorOf(res: Response): Promise<Record<string, unknown>> {
  return (decodeCbor(new Uint8Array(await res.arrayBuffer())) as { error: Record<string, unknown> }).error;
}

/** A body the test writes when it likes: the call holds its reservation until then. */
function slowBody(): { readable: ReadableStream<Uint8Array>; finish: () => Promise<void> } {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  return {
    readable,
    finish: async () => {
      await writer.write(encodeCbor({ hashes: new Uint8Array(0) }));
      await writer.close();
    },
  };
}

describe("request bytes in flight in one object", () => {
  it("answers rate_limited with a retry hint past the bound, and serves again once bodies are read", async () => {
    const ws = freshWorkspace();
    const full = MAX_OBJECT_INFLIGHT_BYTES / FILLER;
    const held = Array.from({ length: full }, () => slowBody());
    const calls = held.map((b) => ws.serve("has", b.readable, "rw", FILLER));
    // Calls reach the object in order: these are refused while the others wait for their bodies.
    for (let i = 0; i < 3; i++) {
      const extra = slowBody();
      const res = await ws.serve("has", extra.readable, "rw", FILLER);
      expect(res.status).toBe(429);
      expect(res.headers.get("retry-after")).toBe("1");
      expect((decodeCbor(new Uint8Array(await res.arrayBuffer())) as { error: unknown }).error).toMatchObject({
        code: "rate_limited",
        limit: MAX_OBJECT_INFLIGHT_BYTES,
        retryAfterMs: 1000,
      });
    }
    // Even a small body waits while the bound is full.
    const small = await ws.serve("has", encodeCbor({ hashes: new Uint8Array(0) }), "rw");
    expect(small.status).toBe(429);
    for (const b of held) await b.finish();
    expect((await Promise.all(calls)).map((r) => r.status)).toEqual(Array(full).fill(200));
    expect((await ws.serve("has", encodeCbor({ hashes: new Uint8Array(0) }), "rw")).status).toBe(200);
    const peak = await runInDurableObject(ws, (o: WorkspaceObject) => o.inflight.peak);
    expect(peak).toBeLessThanOrEqual(MAX_OBJECT_INFLIGHT_BYTES);
  });

  it("admits one request of any allowed size when nothing else is in flight", async () => {
    const ws = freshWorkspace();
    const res = await ws.serve("has", encodeCbor({ hashes: new Uint8Array(32 * 1000) }), "rw");
    expect(res.status).toBe(200);
  });

  it("refuses a body of more CBOR items than maxBodyItems before decoding it, whatever the operation", async () => {
    const ws = freshWorkspace();
    const push = await ws.serve("push", pushOfLongLists(4, 55_000), "rw");
    expect(push.status).toBe(413);
    expect(await errorOf(push)).toMatchObject({
      code: "payload_too_large",
      field: "body",
      limit: LIMITS.maxBodyItems,
    });
    // A million empty maps under a key hello ignores: 1 MB that decodes to a million objects.
    const padding = Array.from({ length: 1_000_000 }, () => ({}));
    const hello = await ws.serve("hello", encodeCbor({ ...helloRequest(randomId()), padding }), "rw");
    expect(hello.status).toBe(413);
    expect((await errorOf(hello)).code).toBe("payload_too_large");
    expect((await ws.serve("hello", encodeCbor(helloRequest(randomId())), "rw")).status).toBe(200);
  });

  it("counts what decoding a body holds against the bound, and refuses it before decoding it", async () => {
    const ws = freshWorkspace();
    const held = [slowBody()];
    const calls = held.map((b) => ws.serve("has", b.readable, "rw", LIMITS.maxBodyBytes));
    // 150,000 byte strings in 5 MB: its bytes fit beside the body held, its decoded value does not.
    const body = pushOfLongLists(3, 50_000);
    expect(LIMITS.maxBodyBytes + body.byteLength).toBeLessThan(MAX_OBJECT_INFLIGHT_BYTES);
    const busy = await ws.serve("push", body, "rw");
    expect(busy.status).toBe(429);
    expect(busy.headers.get("retry-after")).toBe("1");
    expect(await errorOf(busy)).toMatchObject({ code: "rate_limited", limit: MAX_OBJECT_INFLIGHT_BYTES });
    for (const b of held) await b.finish();
    expect((await Promise.all(calls)).map((r) => r.status)).toEqual([200]);
    // Alone, it is decoded, and refused for its form: chunks as an array are version 3's (a hash list since 4).
    const alone = await ws.serve("push", body, "rw");
    expect((await errorOf(alone)).code).toBe("unsupported_version");
    const peak = await runInDurableObject(ws, (o: WorkspaceObject) => o.inflight.peak);
    expect(peak).toBeLessThanOrEqual(MAX_OBJECT_INFLIGHT_BYTES);
    expect(peak).toBeGreaterThan(body.byteLength + 150_000 * 32);
  });
});

/**
 * Fills the process's budget, each workspace far under its own bound: a
 * full body declared in `full` workspaces (the first; at most as many as
 * the bodies' line lets in at once), then FILLER in each of as many as the
 * rest holds, all held until finished.
 */
async function fillProcess(full = BODIES_AT_ONCE) {
  const sizes = [
    ...Array(full).fill(LIMITS.maxBodyBytes),
    ...Array((MAX_PROCESS_INFLIGHT_BYTES - full * LIMITS.maxBodyBytes) / FILLER).fill(FILLER),
  ] as number[];
  const workspaces = sizes.map(() => freshWorkspace());
  const held = workspaces.map(() => slowBody());
  const calls = held.map((b, i) => (workspaces[i] as Workspace).serve("has", b.readable, "rw", sizes[i]));
  // Calls to different objects arrive in no set order: wait until each has reserved its body.
  for (let tries = 0; ; tries++) {
    const peaks = await Promise.all(
      workspaces.map((w) => runInDurableObject(w, (o: WorkspaceObject) => o.inflight.peak)),
    );
    if (peaks.every((p, i) => p >= (sizes[i] as number))) break;
    if (tries > 500) throw new Error(`the held bodies were never reserved: ${peaks.join(", ")}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return { workspaces, held, calls };
}

describe("request bytes in flight in the process", () => {
  it("counts every workspace's bodies against one budget, and refuses past it with a retry hint once its wait is over", async () => {
    // Bodies under half a full one: the bodies' line is left empty, so what the other waits for is the budget.
    const { workspaces, held, calls } = await fillProcess(0);
    const other = freshWorkspace();
    // A body as large as the room for small requests (half a full one) does not get it: it waits in line
    // (MAX_WAIT_MS), and is refused.
    const res = await other.serve("has", slowBody().readable, "rw", SMALL_REQUEST_ROOM);
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await errorOf(res)).toMatchObject({
      code: "rate_limited",
      limit: MAX_PROCESS_INFLIGHT_BYTES,
      retryAfterMs: 1000,
    });
    for (const b of held) await b.finish();
    expect((await Promise.all(calls)).map((r) => r.status)).toEqual(workspaces.map(() => 200));
    expect((await other.serve("has", encodeCbor({ hashes: new Uint8Array(32) }), "rw")).status).toBe(200);
  });

  it("keeps room for small requests while large bodies fill the budget (an honest host's hello gets in)", async () => {
    const { held, calls, workspaces } = await fillProcess();
    const honest = freshWorkspace();
    const hello = await honest.serve("hello", encodeCbor(helloRequest(randomId())), "rw");
    expect(hello.status).toBe(200);
    // A few MiB more (an upload of a few chunks) fits in the room beside them.
    const upload = slowBody();
    const uploading = honest.serve("has", upload.readable, "rw", SMALL_REQUEST_ROOM - MiB);
    const probe = await freshWorkspace().serve("has", encodeCbor({ hashes: new Uint8Array(32) }), "rw");
    expect(probe.status).toBe(200);
    await upload.finish();
    expect((await uploading).status).toBe(200);
    for (const b of held) await b.finish();
    expect((await Promise.all(calls)).map((r) => r.status)).toEqual(workspaces.map(() => 200));
  });

  it("keeps room for tiny requests while bodies under half a full one fill the room for small ones", async () => {
    const { held, calls, workspaces } = await fillProcess();
    // Requests of 2 MB (a wide push's size) fill the room for small requests; one more waits in line.
    const mediums = Array.from({ length: SMALL_REQUEST_ROOM / (2 * 1024 * 1024) + 1 }, () => slowBody());
    const places = mediums.map(() => freshWorkspace());
    const pending = mediums.map((b, i) => (places[i] as Workspace).serve("has", b.readable, "rw", 2 * 1024 * 1024));
    const reserved = () =>
      Promise.all(places.map((w) => runInDurableObject(w, (o: WorkspaceObject) => o.inflight.peak > 0)));
    for (let tries = 0; (await reserved()).filter(Boolean).length < mediums.length - 1; tries++) {
      if (tries > 500) throw new Error("the room for small requests never filled");
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((await reserved()).filter(Boolean).length).toBe(mediums.length - 1);
    // A hello, and a probe as large as a tiny request may be, still get in.
    expect((await freshWorkspace().serve("hello", encodeCbor(helloRequest(randomId())), "rw")).status).toBe(200);
    const probe = encodeCbor({ hashes: new Uint8Array(Math.floor((TINY_REQUEST_BYTES - 64) / 32) * 32) });
    expect((await freshWorkspace().serve("has", probe, "rw")).status).toBe(200);
    for (const b of [...held, ...mediums]) await b.finish();
    expect((await Promise.all(calls)).map((r) => r.status)).toEqual(workspaces.map(() => 200));
    await Promise.all(pending);
  });

  it("serves requests waiting in line in their turn, first come first served, as the budget frees", async () => {
    const { held, calls, workspaces } = await fillProcess();
    const reservedIn = (w: Workspace) => runInDurableObject(w, (o: WorkspaceObject) => o.inflight.peak > 0);
    const [first, second] = [freshWorkspace(), freshWorkspace()];
    const firstBody = slowBody();
    const firstCall = first.serve("has", firstBody.readable, "rw", LIMITS.maxBodyBytes);
    await new Promise((r) => setTimeout(r, 100));
    const secondBody = slowBody();
    const secondCall = second.serve("has", secondBody.readable, "rw", SMALL_REQUEST_ROOM);
    await new Promise((r) => setTimeout(r, 100));
    expect([await reservedIn(first), await reservedIn(second)]).toEqual([false, false]);
    // A full body's bytes free: the first in line takes them, though the second would have fitted too.
    await (held[0] as ReturnType<typeof slowBody>).finish();
    expect((await calls[0])?.status).toBe(200);
    await until(() => reservedIn(first));
    expect(await reservedIn(second)).toBe(false);
    await firstBody.finish();
    expect((await firstCall).status).toBe(200);
    await until(() => reservedIn(second));
    await secondBody.finish();
    expect((await secondCall).status).toBe(200);
    for (const b of held.slice(1)) await b.finish();
    expect((await Promise.all(calls)).map((r) => r.status)).toEqual(workspaces.map(() => 200));
  });
});

describe("large bodies in the bodies' line", () => {
  it("reads two full bodies at once across the process: a third waits for one to end, a small one does not", async () => {
    const workspaces = [freshWorkspace(), freshWorkspace(), freshWorkspace()];
    const bodies = workspaces.map(() => slowBody());
    const reservedIn = (i: number) =>
      runInDurableObject(workspaces[i] as Workspace, (o: WorkspaceObject) => o.inflight.peak > 0);
    const serve = (i: number) =>
      (workspaces[i] as Workspace).serve(
        "has",
        (bodies[i] as ReturnType<typeof slowBody>).readable,
        "rw",
        LIMITS.maxBodyBytes,
      );
    const first = [serve(0), serve(1)];
    await until(async () => (await reservedIn(0)) && (await reservedIn(1)));
    // The process budget has room for it; the line has not.
    expect(3 * LIMITS.maxBodyBytes).toBeLessThanOrEqual(MAX_PROCESS_INFLIGHT_BYTES);
    const third = serve(2);
    await new Promise((r) => setTimeout(r, 200));
    expect(await reservedIn(2)).toBe(false);
    const probe = await freshWorkspace().serve("has", encodeCbor({ hashes: new Uint8Array(32) }), "rw");
    expect(probe.status).toBe(200);
    await (bodies[0] as ReturnType<typeof slowBody>).finish();
    expect((await first[0])?.status).toBe(200);
    await until(() => reservedIn(2));
    for (const b of bodies.slice(1)) await b.finish();
    expect([(await first[1])?.status, (await third).status]).toEqual([200, 200]);
  });
});

describe("an HTTP answer's room in the answers' line", () => {
  /** A workspace holding eight 1 MiB objects, and an objects/get asking for all of them (maxGetBytes answered). */
  async function stocked(): Promise<{ ws: Workspace; get: Uint8Array }> {
    const ws = freshWorkspace();
    const objects = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const bytes = new Uint8Array(MiB).map(() => (Math.random() * 256) | 0);
        return { hash: await sha256(bytes), bytes };
      }),
    );
    for (const half of [objects.slice(0, 4), objects.slice(4)]) {
      expect((await ws.serve("putObjects", encodeCbor({ objects: half }), "rw")).status).toBe(200);
    }
    return { ws, get: encodeCbor(getObjectsFields({ hashes: objects.map((o) => o.hash) })) };
  }
  const reservedIn = (ws: Workspace) => runInDurableObject(ws, (o: WorkspaceObject) => o.inflight.peak > 0);

  it("is kept until its body is read or dropped, and the next answer waits for it", async () => {
    const { ws, get } = await stocked();
    // As many answers as are made at once, unread.
    const answers: Response[] = [];
    const ask = async () => {
      const answer = await ws.serve("getObjects", get, "rw");
      expect(answer.status).toBe(200);
      answers.push(answer);
    };
    for (let i = 0; i < ANSWERS_AT_ONCE; i++) await ask();
    const waitsUntil = async (free: () => Promise<unknown>) => {
      const other = freshWorkspace();
      const waiting = other.serve("getObjects", get, "rw");
      await new Promise((r) => setTimeout(r, 200));
      expect(await reservedIn(other)).toBe(false);
      await free();
      await until(() => reservedIn(other));
      const answer = await waiting;
      expect(answer.status).toBe(200);
      await answer.arrayBuffer();
    };
    // An answer dropped unread gives its room back.
    await waitsUntil(() => (answers[0] as Response).body?.cancel() ?? Promise.resolve());
    // So does one read to its end.
    await ask();
    await waitsUntil(async () => {
      expect((await (answers[1] as Response).arrayBuffer()).byteLength).toBeGreaterThan(LIMITS.maxGetBytes);
    });
    for (const a of answers.slice(2)) await a.arrayBuffer();
  });

  it("serves the workspace admitted least lately first, not the one that asks most", async () => {
    const { ws, get } = await stocked();
    // Two answers held, each read a piece at a time so that its room's lease is renewed and never lapses.
    const held: Trickle[] = [];
    for (let i = 0; i < ANSWERS_AT_ONCE; i++) held.push(trickle(await ws.serve("getObjects", get, "rw")));
    // The same workspace asks three times more, then another workspace once.
    const again = Array.from({ length: 3 }, () => ws.serve("getObjects", get, "rw"));
    let answeredAgain = 0;
    for (const a of again) void a.then(() => answeredAgain++);
    await new Promise((r) => setTimeout(r, 50));
    const other = freshWorkspace();
    const otherAnswer = other.serve("getObjects", get, "rw");
    await new Promise((r) => setTimeout(r, 50));
    expect(await reservedIn(other)).toBe(false);
    // One answer is read to its end: its room goes to the other workspace, though the first asked before it.
    await held[0]?.drain();
    await until(() => reservedIn(other));
    // In order, all three of the first workspace's would have been answered first. One may be: the runtime
    // can take the second held answer's last piece at the same moment, freeing a second room.
    expect(answeredAgain).toBeLessThan(2);
    const answer = await otherAnswer;
    expect(answer.status).toBe(200);
    await answer.arrayBuffer();
    await held[1]?.drain();
    for (const a of await Promise.all(again)) await a.arrayBuffer();
  });
});

interface Trickle {
  /** Reads the rest at once. */
  drain(): Promise<void>;
}

/** Reads `answer`'s body a piece every 300 ms (a slow reader: its lease is renewed each piece), until drained. */
function trickle(answer: Response): Trickle {
  const reader = (answer.body as ReadableStream<Uint8Array>).getReader();
  let draining = false;
  const slowly = (async () => {
    while (!draining) {
      if ((await reader.read()).done) return;
      await new Promise((r) => setTimeout(r, 300));
    }
  })();
  return {
    async drain() {
      draining = true;
      await slowly;
      while (!(await reader.read()).done) {}
    },
  };
}

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let tries = 0; !(await check()); tries++) {
    if (tries > 500) throw new Error("never admitted");
    await new Promise((r) => setTimeout(r, 20));
  }
}
