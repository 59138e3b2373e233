/**
 * log and snapshot (worker/sync/log.ts, snapshot.ts): a path's retained
 * states newest first with deletions between them, the workspace's revs,
 * and a subtree as it was at a rev.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { describe, expect, it } from "vitest";
import { decodeCbor, encodeCbor } from "../../protocol/cbor.ts";
import { toHex } from "../../protocol/hash.ts";
import { decodeLogResponse } from "../../protocol/history.ts";
import { hostTag } from "../../worker/sync/host-tag.ts";
import { collect, DAY, KEEP_NOTHING } from "./gc-support.ts";
import { dir, freshWorkspace, gone, helloRequest, ok, refused, smallFile, symlink, TestHost } from "./helpers.ts";

describe("log", () => {
  it("lists a path's states newest first, with the deletion between two lives", async () => {
    const ws = freshWorkspace();
    const a = new TestHost(ws);
    const b = new TestHost(ws);
    const v1 = await smallFile("f", "one");
    const v2 = await smallFile("f", "two!");
    const v3 = await smallFile("f", "three");
    const before = Date.now();
    await a.push([v1.entry], [v1.object]); // rev 1
    await b.push([v2.entry], [v2.object]); // rev 2
    await a.push([gone("f")]); // rev 3
    await b.push([v3.entry], [v3.object]); // rev 4
    const { states, next } = await ok(ws, "log", { path: "f" });
    expect(next).toBeUndefined();
    expect(states?.map((s) => [s.rev, s.kind, s.size, s.until, toHex(s.host)])).toEqual([
      [4, "file", 5, undefined, toHex(b.id)],
      [3, "gone", undefined, undefined, toHex(a.id)],
      [2, "file", 4, 3, toHex(b.id)],
      [1, "file", 3, 2, toHex(a.id)],
    ]);
    expect(states?.every((s) => s.at >= before && s.at <= Date.now())).toBe(true);
  });

  it("names each state's and rev's host by the label it gave itself, when it gave one", async () => {
    const ws = freshWorkspace();
    const named = new TestHost(ws);
    const unnamed = new TestHost(ws);
    await ok(ws, "hello", helloRequest(named.id, { label: "laptop" }));
    const v1 = await smallFile("f", "one");
    const v2 = await smallFile("f", "two");
    await named.push([v1.entry], [v1.object]); // rev 1
    await unnamed.push([v2.entry], [v2.object]); // rev 2
    const { states } = await ok(ws, "log", { path: "f" });
    expect(states?.map((s) => [s.rev, s.label])).toEqual([
      [2, undefined],
      [1, "laptop"],
    ]);
    const { revs } = await ok(ws, "log", {});
    expect(revs?.map((r) => [r.rev, r.label])).toEqual([
      [2, undefined],
      [1, "laptop"],
    ]);
  });

  it("pages with `before` and lists each state once", async () => {
    const ws = freshWorkspace();
    const host = new TestHost(ws);
    for (let i = 0; i < 5; i++) {
      const v = await smallFile("f", `v${i}`);
      await host.push([v.entry], [v.object]);
      if (i === 2) await host.push([gone("f")]);
    }
    const all = (await ok(ws, "log", { path: "f" })).states?.map((s) => `${s.rev}:${s.kind}`);
    const paged: string[] = [];
    let before: number | undefined;
    for (;;) {
      const page = await ok(ws, "log", { path: "f", limit: 2, ...(before ? { before } : {}) });
      paged.push(...(page.states ?? []).map((s) => `${s.rev}:${s.kind}`));
      if (page.next === undefined) break;
      before = page.next;
    }
    expect(all).toEqual(["6:file", "5:file", "4:gone", "3:file", "2:file", "1:file"]);
    expect(paged).toEqual(all);
    expect(new Set(paged).size).toBe(paged.length);
  });

  it("shows a read-only token no host ids: a digest whose first bytes are the host's tag", async () => {
    const ws = freshWorkspace();
    const host = new TestHost(ws);
    const v = await smallFile("f", "one");
    await host.push([v.entry], [v.object]);
    const asReader = async (body: Record<string, unknown>) =>
      decodeLogResponse(decodeCbor(new Uint8Array(await (await ws.serve("log", encodeCbor(body), "r")).arrayBuffer())));
    const shown = [(await asReader({ path: "f" })).states?.[0]?.host, (await asReader({})).revs?.[0]?.host];
    const digest = toHex(sha256(host.id).subarray(0, 16));
    expect(shown.map((h) => h && toHex(h))).toEqual([digest, digest]);
    expect(digest.startsWith(hostTag(host.id))).toBe(true);
    // A read-write token still sees the id a host names itself by.
    expect(toHex((await ok(ws, "log", { path: "f" })).states?.[0]?.host as Uint8Array)).toBe(toHex(host.id));
  });

  it("lists the workspace's revs without a path", async () => {
    const ws = freshWorkspace();
    const host = new TestHost(ws);
    const f = await smallFile("a", "a");
    await host.push([dir("d"), f.entry], [f.object]);
    await host.push([gone("a")]);
    const { revs } = await ok(ws, "log", {});
    expect(revs?.map((r) => [r.rev, r.entries, toHex(r.host)])).toEqual([
      [2, 1, toHex(host.id)],
      [1, 2, toHex(host.id)],
    ]);
  });
});

describe("snapshot", () => {
  it("answers a directory's tree as it was at a rev, deleted and overwritten paths included", async () => {
    const ws = freshWorkspace();
    const host = new TestHost(ws);
    const x1 = await smallFile("d/x", "x one");
    const y = await smallFile("d/sub/y", "y");
    const out = await smallFile("e", "outside");
    await host.push([dir("d"), dir("d/sub"), x1.entry, y.entry, out.entry], [x1.object, y.object, out.object]); // 1
    const x2 = await smallFile("d/x", "x two");
    await host.push([x2.entry, symlink("d/l", "x")], [x2.object]); // 2
    await host.push([gone("d/sub")]); // 3
    const at1 = await ok(ws, "snapshot", { path: "d", rev: 1 });
    expect(at1.entries.map((e) => [e.path, e.kind, e.rev])).toEqual([
      ["d", "dir", 1],
      ["d/sub", "dir", 1],
      ["d/sub/y", "file", 1],
      ["d/x", "file", 1],
    ]);
    expect(at1.entries.find((e) => e.path === "d/x")).toMatchObject({ chunks: [x1.object.hash] });
    const at2 = await ok(ws, "snapshot", { path: "d", rev: 2 });
    expect(at2.entries.map((e) => [e.path, e.rev])).toEqual([
      ["d", 1],
      ["d/l", 2],
      ["d/sub", 1],
      ["d/sub/y", 1],
      ["d/x", 2],
    ]);
    const now = await ok(ws, "snapshot", { path: "d", rev: 3 });
    expect(now.entries.map((e) => e.path)).toEqual(["d", "d/l", "d/x"]);
    const whole = await ok(ws, "snapshot", { rev: 1, limit: 2 });
    expect(whole.entries.map((e) => e.path)).toEqual(["d", "d/sub"]);
    expect(whole.next).toBe("d/sub");
    const rest = await ok(ws, "snapshot", { rev: 1, after: whole.next });
    expect(rest.entries.map((e) => e.path)).toEqual(["d/sub/y", "d/x", "e"]);
  });

  it("refuses a rev older than the history kept with history_expired, and changes nothing", async () => {
    const ws = freshWorkspace();
    const host = new TestHost(ws);
    const v1 = await smallFile("f", "one");
    const v2 = await smallFile("f", "two");
    await host.push([v1.entry], [v1.object]);
    await host.push([v2.entry], [v2.object]);
    await host.push([dir("g")]);
    await collect(ws, KEEP_NOTHING, DAY);
    const { status, error } = await refused(ws, "snapshot", { path: "f", rev: 1 });
    expect(status).toBe(410);
    expect(error).toMatchObject({ code: "history_expired", retainedFrom: 3 });
    expect((await ok(ws, "snapshot", { path: "f", rev: 3 })).entries.map((e) => e.rev)).toEqual([2]);
    expect((await ok(ws, "log", { path: "f" })).retainedFrom).toBe(3);
  });
});
