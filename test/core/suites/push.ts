import { describe, expect, it } from "vitest";
import { ORIGIN } from "../../../protocol/cursor.ts";
import { joinHashes, toHex } from "../../../protocol/hash.ts";
import {
  blob,
  dir,
  freshWorkspace,
  gone,
  metered,
  ok,
  refused,
  smallFile,
  stats,
  symlink,
  TestHost,
  withoutRev,
} from "../helpers.ts";

export function pushSuite(): void {
  describe("push", () => {
    it("round-trips files, dirs, symlinks and tombstones through changes", async () => {
      const ws = freshWorkspace();
      const a = new TestHost(ws);
      const b = new TestHost(ws);
      const readme = await smallFile("src/readme.md", "hello");
      const old = await smallFile("old.txt", "bye");
      await a.push(
        [dir("src"), readme.entry, old.entry, symlink("link", "src/readme.md")],
        [readme.object, old.object],
      );
      await a.push([gone("old.txt")]);
      const { entries } = await b.pullAll();
      expect(entries.map(withoutRev)).toEqual([
        symlink("link", "src/readme.md"),
        dir("src"),
        readme.entry,
        gone("old.txt"),
      ]);
      expect(entries.map((e) => e.rev)).toEqual([1, 1, 1, 2]);
    });

    it("takes one new rev per accepted pack and answers it with the new acked cursor", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const first = await host.push([dir("a"), dir("b")]);
      const second = await host.push([dir("c")]);
      expect([first.rev, second.rev]).toEqual([1, 2]);
      expect(second).toEqual({
        rev: 2,
        acked: { rev: 2, path: null },
        applied: true,
        committed: true,
        revId: expect.any(Uint8Array),
      });
    });

    it("acknowledges a repeated pack without applying it again or writing a row", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const file = await smallFile("f", "x");
      const request = host.packRequest([file.entry], [file.object]);
      await ok(ws, "push", request);
      let again: unknown;
      const meter = await metered(ws, async () => {
        again = await ok(ws, "push", request);
      });
      expect(again).toEqual({
        rev: 1,
        acked: { rev: 1, path: null },
        applied: false,
        committed: false,
        revId: expect.any(Uint8Array),
      });
      expect(meter.rowsWritten).toBe(0);
    });

    it("acknowledges an older pack than the acked cursor without applying it", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const firstPack = host.packRequest([dir("a")]);
      await host.push([dir("a")]);
      await host.push([dir("b")]);
      const answer = await ok(ws, "push", firstPack);
      expect(answer).toEqual({
        rev: 2,
        acked: { rev: 2, path: null },
        applied: false,
        committed: false,
        revId: expect.any(Uint8Array),
      });
    });

    it("refuses a pack whose start is not the acked cursor and names the acked cursor", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      await host.push([dir("a")]);
      const { status, error } = await refused(ws, "push", {
        hostId: host.id,
        start: { rev: 5, path: null },
        end: { rev: 6, path: null },
        entries: [dir("b")],
      });
      expect(status).toBe(409);
      expect(error.code).toBe("cursor_mismatch");
      expect(error.acked).toEqual({ rev: 1, path: null });
    });

    it("applies a pack that ends in the middle of a host rev and resumes from it", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      await ok(ws, "push", {
        hostId: host.id,
        start: ORIGIN,
        end: { rev: 1, path: "b" },
        entries: [dir("a"), dir("b")],
      });
      const answer = await ok(ws, "push", {
        hostId: host.id,
        start: { rev: 1, path: "b" },
        end: { rev: 1, path: null },
        entries: [dir("c")],
      });
      expect(answer.acked).toEqual({ rev: 1, path: null });
      expect(answer.rev).toBe(2);
    });

    it("lists the missing objects and applies nothing", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const held = await smallFile("held", "held bytes");
      await host.push([held.entry], [held.object]);
      const before = await stats(ws);
      const lost = await smallFile("lost", "never uploaded");
      const { status, error } = await refused(
        ws,
        "push",
        host.packRequest([dir("d"), lost.entry, { ...held.entry, path: "copy" }]),
      );
      expect(status).toBe(422);
      expect(error.code).toBe("missing_objects");
      expect((error.missing as Uint8Array[]).map(toHex)).toEqual([toHex(lost.object.hash)]);
      expect(await stats(ws)).toEqual(before);
    });

    it("names at most 1,024 missing chunks, the first the pack lists, each once", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const chunks = Array.from({ length: 1500 }, (_, i) => {
        const hash = new Uint8Array(32).fill(7);
        new DataView(hash.buffer).setUint32(0, i);
        return hash;
      });
      // The first chunk again at the end: named once, counted once more in the message.
      const wide = {
        kind: "file" as const,
        path: "wide",
        mode: 0o644,
        mtime: 0,
        size: 1501,
        chunks: [...chunks, chunks[0] as Uint8Array],
      };
      const { status, error } = await refused(ws, "push", host.packRequest([wide]));
      expect(status).toBe(422);
      expect(error.code).toBe("missing_objects");
      expect((error.missing as Uint8Array[]).map(toHex)).toEqual(chunks.slice(0, 1024).map(toHex));
      // Refused on the first 1,024 alone: the rest were never probed.
      expect(error.message).toContain("1024 chunk reference(s) among chunks 1-1024 of 1501");
    });

    it("refuses at the first span of chunks that lacks any, naming those", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const held = await smallFile("held", "held bytes");
      await host.push([held.entry], [held.object]);
      const lacking = [1, 2, 3].map((n) => new Uint8Array(32).fill(n));
      const wide = {
        kind: "file" as const,
        path: "wide",
        mode: 0o644,
        mtime: 0,
        size: 2000 * held.object.bytes.byteLength + 3,
        chunks: [...Array.from({ length: 2000 }, () => held.object.hash), ...lacking],
      };
      const before = await stats(ws);
      const { status, error } = await refused(ws, "push", host.packRequest([wide]));
      expect(status).toBe(422);
      expect((error.missing as Uint8Array[]).map(toHex)).toEqual(lacking.map(toHex));
      expect(error.message).toContain("3 chunk reference(s) among chunks 1025-2003 of 2003");
      expect(await stats(ws)).toEqual(before);
    });

    it("stores inline objects and accepts entries that name them", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const file = await smallFile("f", "inline");
      await host.push([file.entry], [file.object]);
      const got = await ok(ws, "getObjects", { hashes: joinHashes([file.object.hash]) });
      expect(got.objects[0]?.bytes).toEqual(file.object.bytes);
    });

    it("refuses a pack with a corrupt inline object and stores nothing", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const file = await smallFile("f", "real");
      const before = await stats(ws);
      const { error } = await refused(
        ws,
        "push",
        host.packRequest([file.entry], [{ hash: file.object.hash, bytes: new TextEncoder().encode("fake") }]),
      );
      expect(error.code).toBe("hash_mismatch");
      expect(await stats(ws)).toEqual(before);
    });

    it("refuses the whole pack when a path changed on the server since its base", async () => {
      const ws = freshWorkspace();
      const a = new TestHost(ws);
      const b = new TestHost(ws);
      const v1 = await smallFile("f", "v1");
      const va = await smallFile("f", "from a");
      const vb = await smallFile("f", "from b");
      await a.push([v1.entry], [v1.object]);
      await b.pullAll();
      await a.push([va.entry], [va.object]);
      const before = await stats(ws);
      const { status, error } = await refused(
        ws,
        "push",
        b.packRequest([dir("other"), { ...vb.entry, base: 1 }], [vb.object]),
      );
      expect(status).toBe(409);
      expect(error.code).toBe("conflict");
      expect(error.conflicts).toEqual([{ path: "f", rev: 2 }]);
      expect(await stats(ws)).toEqual(before);
    });

    it("accepts a write whose base is the current rev of the path", async () => {
      const ws = freshWorkspace();
      const a = new TestHost(ws);
      const b = new TestHost(ws);
      const v1 = await smallFile("f", "v1");
      const v2 = await smallFile("f", "v2");
      await a.push([v1.entry], [v1.object]);
      const answer = await b.push([{ ...v2.entry, base: 1 }], [v2.object]);
      expect(answer.rev).toBe(2);
    });

    it("accepts a write over a deletion another host made after its base (a deletion is no work to lose)", async () => {
      const ws = freshWorkspace();
      const a = new TestHost(ws);
      const b = new TestHost(ws);
      const v1 = await smallFile("f", "v1");
      const vb = await smallFile("f", "from b");
      await a.push([v1.entry], [v1.object]);
      await b.pullAll();
      await a.push([gone("f")]);
      const answer = await b.push([{ ...vb.entry, base: 1 }], [vb.object]);
      expect(answer.applied).toBe(true);
      expect(answer.rev).toBe(3);
    });

    it("accepts a host's own later write over a stale base", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const v1 = await smallFile("f", "v1");
      const v2 = await smallFile("f", "v2");
      await host.push([v1.entry], [v1.object]);
      await host.push([dir("x")]);
      const answer = await host.push([{ ...v2.entry, base: 0 }], [v2.object]);
      expect(answer.applied).toBe(true);
    });

    it("propagates a mode-only change", async () => {
      const ws = freshWorkspace();
      const a = new TestHost(ws);
      const b = new TestHost(ws);
      const file = await smallFile("run.sh", "#!/bin/sh\n", 0o644);
      await a.push([file.entry], [file.object]);
      const { next } = await b.pullAll();
      await a.push([{ ...file.entry, mode: 0o755 }]);
      const { entries } = await b.pullAll(next);
      expect(entries).toEqual([{ ...file.entry, mode: 0o755, rev: 2 }]);
    });

    it("propagates an mtime-only change", async () => {
      const ws = freshWorkspace();
      const a = new TestHost(ws);
      const b = new TestHost(ws);
      await a.push([dir("d")]);
      const { next } = await b.pullAll();
      await a.push([{ kind: "dir", path: "d", mode: 0o755, mtime: 42 }]);
      expect((await b.pullAll(next)).entries).toEqual([{ kind: "dir", path: "d", mode: 0o755, mtime: 42, rev: 2 }]);
    });

    it("replaces a directory's subtree with tombstones when the directory becomes a file", async () => {
      const ws = freshWorkspace();
      const a = new TestHost(ws);
      const b = new TestHost(ws);
      const inner = await smallFile("d/inner.txt", "inner");
      const deeper = await smallFile("d/e/deeper.txt", "deeper");
      const sibling = await smallFile("d-sibling", "sibling");
      await a.push(
        [dir("d"), dir("d/e"), inner.entry, deeper.entry, sibling.entry],
        [inner.object, deeper.object, sibling.object],
      );
      const { next } = await b.pullAll();
      const replacement = await smallFile("d", "now a file");
      await a.push([replacement.entry], [replacement.object]);
      const { entries } = await b.pullAll(next);
      expect(entries).toEqual([
        { ...replacement.entry, rev: 2 },
        { kind: "gone", path: "d/e", rev: 2 },
        { kind: "gone", path: "d/e/deeper.txt", rev: 2 },
        { kind: "gone", path: "d/inner.txt", rev: 2 },
      ]);
    });

    it("replaces a directory's subtree with tombstones when the directory is deleted", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const inner = await smallFile("d/f", "f");
      await host.push([dir("d"), inner.entry], [inner.object]);
      await host.push([gone("d")]);
      const s = await stats(ws);
      expect([s.dirs, s.files, s.tombstones]).toEqual([0, 0, 2]);
    });

    it("replaces a directory's subtree when the directory becomes a symlink", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      await host.push([dir("d"), dir("d/sub")]);
      await host.push([symlink("d", "elsewhere")]);
      const s = await stats(ws);
      expect([s.dirs, s.symlinks, s.tombstones]).toEqual([0, 1, 1]);
    });

    it("keeps entries of the same pack that lie under a replaced directory", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      await host.push([dir("d"), dir("d/old")]);
      const fresh = await smallFile("d/new", "new");
      await host.push([gone("d"), fresh.entry], [fresh.object]);
      const { entries } = await new TestHost(ws).pullAll();
      expect(entries.map((e) => [e.path, e.kind])).toEqual([
        ["d", "gone"],
        ["d/new", "file"],
        ["d/old", "gone"],
      ]);
    });

    it("refuses a pack that puts an entry under a file of the same pack", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const file = await smallFile("f", "file");
      const { status, error } = await refused(
        ws,
        "push",
        host.packRequest([file.entry, dir("f/child")], [file.object]),
      );
      expect(status).toBe(400);
      expect(error.code).toBe("bad_request");
    });

    it("refuses as a conflict an entry under a file another host stored", async () => {
      const ws = freshWorkspace();
      const a = new TestHost(ws);
      const b = new TestHost(ws);
      const file = await smallFile("x", "file");
      await a.push([file.entry], [file.object]);
      const before = await stats(ws);
      const { error } = await refused(ws, "push", b.packRequest([dir("x/y"), dir("x/y/z")]));
      expect(error.code).toBe("conflict");
      expect(error.conflicts).toEqual([{ path: "x", rev: 1 }]);
      expect(await stats(ws)).toEqual(before);
    });

    it("accepts an entry under a file the same pack turns into a directory", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const file = await smallFile("x", "file");
      await host.push([file.entry], [file.object]);
      const answer = await host.push([dir("x"), dir("x/y")]);
      expect(answer.applied).toBe(true);
    });

    it("writes nothing for entries that repeat the stored state, says it committed nothing, and still moves the acked cursor", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      await host.push([dir("a")]);
      const answer = await host.push([dir("a"), gone("never-existed")]);
      expect(answer).toEqual({
        rev: 1,
        acked: { rev: 2, path: null },
        applied: true,
        committed: false,
        revId: expect.any(Uint8Array),
      });
    });

    it("records the pushing host as the origin so its pull skips its own entries", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      await host.push([dir("mine")]);
      const { entries, next } = await host.pullAll();
      expect(entries).toEqual([]);
      expect(next).toEqual({ rev: 1, path: null });
    });

    it("refuses a file with more chunks than one row can hold", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const chunk = await blob("c");
      const { error } = await refused(
        ws,
        "push",
        host.packRequest([
          { kind: "file", path: "huge", mode: 0o644, mtime: 0, size: 1, chunks: Array(60_001).fill(chunk.hash) },
        ]),
      );
      expect(error.code).toBe("payload_too_large");
    });

    it("refuses a pack of unrelated very deep paths before holding their ancestors", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const deep = (i: number) => `${i}/${"a/".repeat(790)}f`;
      const before = await stats(ws);
      const { error } = await refused(
        ws,
        "push",
        host.packRequest(Array.from({ length: 5000 }, (_, i) => dir(deep(i)))),
      );
      expect(error.code).toBe("payload_too_large");
      expect(await stats(ws)).toEqual(before);
    });

    it("accepts a deep tree whose entries share their directories", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const dirs = Array.from({ length: 1000 }, (_, i) => dir(Array.from({ length: i + 1 }, () => "d").join("/")));
      expect((await host.push(dirs)).applied).toBe(true);
    });

    it("accepts an entry under a stored file whose directory the same pack deletes", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const file = await smallFile("a/b", "file");
      await host.push([dir("a"), file.entry], [file.object]);
      const answer = await host.push([gone("a"), dir("a/b/c")]);
      expect(answer.applied).toBe(true);
      const { entries } = await new TestHost(ws).pullAll();
      expect(entries.map((e) => [e.path, e.kind])).toEqual([
        ["a", "gone"],
        ["a/b", "gone"],
        ["a/b/c", "dir"],
      ]);
    });

    it("lists missing objects before it looks for conflicts", async () => {
      const ws = freshWorkspace();
      const a = new TestHost(ws);
      const b = new TestHost(ws);
      const v1 = await smallFile("f", "v1");
      await a.push([v1.entry], [v1.object]);
      await a.push([{ ...v1.entry, mode: 0o600 }]);
      const lost = await smallFile("f", "never uploaded");
      const { error } = await refused(ws, "push", b.packRequest([{ ...lost.entry, base: 1 }]));
      expect(error.code).toBe("missing_objects");
    });
  });
}
