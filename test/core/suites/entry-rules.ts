/**
 * What push refuses because no host could write it, and what a `gone`
 * means for a path with live descendants but no entry of its own
 * (PROTOCOL.md §4.5). Refusals change nothing stored.
 */
import { describe, expect, it } from "vitest";
import { encodeCbor } from "../../../protocol/cbor.ts";
import { blob, callRaw, dir, freshWorkspace, gone, refused, smallFile, stats, symlink, TestHost } from "../helpers.ts";

export function entryRulesSuite(): void {
  describe("push's size rule", () => {
    it("refuses a file whose size is not the sum of its stored chunks' sizes", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const f = await smallFile("f.txt", "abc");
      await host.push([dir("d")], [f.object]);
      const before = await stats(ws);
      for (const size of [2, 4, 0]) {
        const { status, error } = await refused(ws, "push", host.packRequest([{ ...f.entry, size }]));
        expect([status, error.code, error.path, error.field]).toEqual([400, "bad_request", "f.txt", "size"]);
      }
      expect(await stats(ws)).toEqual(before);
    });

    it("refuses a file whose size is not the sum of its inline chunks' sizes", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const a = await blob("aaaa");
      const b = await blob("bb");
      const entry = { kind: "file" as const, path: "two", mode: 0o644, mtime: 0, size: 7, chunks: [a.hash, b.hash] };
      const { error } = await refused(ws, "push", host.packRequest([entry], [a, b]));
      expect(error).toMatchObject({
        code: "bad_request",
        path: "two",
        message: "two: size is 7 but its chunks hold 6 bytes",
      });
      expect(await stats(ws)).toMatchObject({ files: 0, objects: 0 });
      await host.push([{ ...entry, size: 6 }], [a, b]);
    });

    it("counts a chunk each time the file names it", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const a = await blob("xyz");
      const entry = {
        kind: "file" as const,
        path: "rep",
        mode: 0o644,
        mtime: 0,
        size: 9,
        chunks: [a.hash, a.hash, a.hash],
      };
      expect((await host.push([entry], [a])).applied).toBe(true);
    });

    it("refuses an empty chunk: an empty file has no chunks", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const empty = await blob("");
      const withChunk = { kind: "file" as const, path: "e", mode: 0o644, mtime: 0, size: 0, chunks: [empty.hash] };
      const { error } = await refused(ws, "push", host.packRequest([withChunk], [empty]));
      expect([error.code, error.path]).toEqual(["bad_request", "e"]);
      await host.push([{ ...withChunk, chunks: [] }]);
      expect(await stats(ws)).toMatchObject({ files: 1 });
    });
  });

  describe("push's symlink target rules", () => {
    /** A push of one symlink whose target's bytes are `bytes`, spliced into valid CBOR. */
    function symlinkBody(host: TestHost, bytes: number[]): Uint8Array {
      const placeholder = "T".repeat(bytes.length);
      const body = encodeCbor(host.packRequest([symlink("l", placeholder)]));
      const marker = new TextEncoder().encode(placeholder);
      const at = body.findIndex((_, i) => marker.every((m, k) => body[i + k] === m));
      body.set(bytes, at);
      return body;
    }

    it("accepts a 4,095-byte target and refuses a 4,096-byte one (Linux cannot create it)", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const { error } = await refused(ws, "push", host.packRequest([symlink("l", "x".repeat(4096))]));
      expect(error).toMatchObject({ code: "bad_request", field: "entries[0].target" });
      await host.push([symlink("l", "x".repeat(4095))]);
    });

    it("refuses target bytes that are not UTF-8 instead of storing them altered", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const answer = await callRaw(ws, "push", symlinkBody(host, [0x61, 0xff, 0x62]));
      expect(answer.status).toBe(400);
      expect((answer.body as { error: unknown }).error).toMatchObject({
        code: "bad_request",
        field: "entries[0].target",
        message: "entries[0].target: target is not valid UTF-8",
      });
      expect(await stats(ws)).toMatchObject({ rev: 0, symlinks: 0 });
    });

    it("refuses U+FFFD in a target, as in a path", async () => {
      const ws = freshWorkspace();
      const { error } = await refused(ws, "push", new TestHost(ws).packRequest([symlink("l", "a\uFFFDb")]));
      expect(error).toMatchObject({ code: "bad_request", field: "entries[0].target" });
    });
  });

  describe("push's reserved names (protocol/paths.ts)", () => {
    it("refuses ferry's own names at any depth, naming the path and the name, and stores nothing", async () => {
      const ws = freshWorkspace();
      const host = new TestHost(ws);
      const f = await smallFile("ok.txt", "ok");
      const cases = [
        [".ferry/store.db", ".ferry"],
        ["src/.ferry", ".ferry"],
        ["a/.ferry-tmp-41-2/x", ".ferry-tmp-41-2"],
        [".ferry-server/do/ns.sqlite", ".ferry-server"],
      ];
      for (const [path, name] of cases) {
        const { status, error } = await refused(
          ws,
          "push",
          host.packRequest([f.entry, gone(path as string)], [f.object]),
        );
        expect([status, error.code, error.path, error.message]).toEqual([
          400,
          "invalid_path",
          path,
          `'${name}' is reserved for ferry's own files on a host`,
        ]);
      }
      expect(await stats(ws)).toMatchObject({ rev: 0, files: 0, objects: 0 });
    });

    it("accepts names that only look like them", async () => {
      const ws = freshWorkspace();
      const names = [".ferryignore", ".ferry-tmp", "x.ferry", ".ferry-server2", ".ferry2", "ferry", ".ferry.bak"];
      await new TestHost(ws).push(names.map((n) => dir(n)));
      const { entries } = await new TestHost(ws).pullAll();
      expect(entries.map((e) => e.path).sort()).toEqual([...names].sort());
    });
  });

  describe("a gone for a path with live descendants but no entry of its own", () => {
    it("accepts children before their directory, and the host creates the directory", async () => {
      const ws = freshWorkspace();
      const f = await smallFile("d/e/f.txt", "f");
      const answer = await new TestHost(ws).push([f.entry], [f.object]);
      expect(answer.applied).toBe(true);
      expect(await stats(ws)).toMatchObject({ files: 1, dirs: 0 });
    });

    it("tombstones every live path under it, at one new rev", async () => {
      const ws = freshWorkspace();
      const a = new TestHost(ws);
      const f = await smallFile("d/e/f.txt", "f");
      const g = await smallFile("d/g.txt", "g");
      const keep = await smallFile("dd/h.txt", "h");
      await a.push([f.entry, g.entry, dir("d/e"), keep.entry], [f.object, g.object, keep.object]);
      const answer = await a.push([gone("d")]);
      expect(answer.rev).toBe(2);
      const { entries } = await new TestHost(ws).pullAll({ rev: 1, path: null });
      expect(entries.map((e) => [e.path, e.kind, e.rev])).toEqual([
        ["d", "gone", 2],
        ["d/e", "gone", 2],
        ["d/e/f.txt", "gone", 2],
        ["d/g.txt", "gone", 2],
      ]);
      expect(await stats(ws)).toMatchObject({ files: 1, dirs: 0 });
    });

    it("tombstones children written after the directory's own tombstone", async () => {
      const ws = freshWorkspace();
      const a = new TestHost(ws);
      await a.push([dir("d")]);
      await a.push([gone("d")]);
      const f = await smallFile("d/late.txt", "late");
      await new TestHost(ws).push([f.entry], [f.object]);
      const answer = await a.push([gone("d")]);
      expect([answer.rev, answer.applied]).toEqual([4, true]);
      expect(await stats(ws)).toMatchObject({ files: 0 });
    });

    it("takes no rev when nothing lies under a path never stored", async () => {
      const ws = freshWorkspace();
      const a = new TestHost(ws);
      const f = await smallFile("dx/f.txt", "f");
      await a.push([f.entry], [f.object]);
      const answer = await a.push([gone("d"), gone("nothing/here")]);
      expect([answer.rev, answer.applied]).toEqual([1, true]);
      expect(await stats(ws)).toMatchObject({ files: 1, tombstones: 0 });
    });

    it("keeps a child the same pack writes under the deleted path", async () => {
      const ws = freshWorkspace();
      const a = new TestHost(ws);
      const old = await smallFile("d/old.txt", "old");
      const fresh = await smallFile("d/new.txt", "new");
      await a.push([old.entry], [old.object]);
      await a.push([gone("d"), fresh.entry], [fresh.object]);
      const { entries } = await new TestHost(ws).pullAll();
      expect(entries.map((e) => [e.path, e.kind])).toEqual([
        ["d", "gone"],
        ["d/new.txt", "file"],
        ["d/old.txt", "gone"],
      ]);
    });
  });
}
