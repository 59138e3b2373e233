/**
 * PROTOCOL.md §4.5 rule 7 for the subtree a pack replaces: a directory
 * deleted, or turned into a file or symlink, must not take with it a live
 * path another host wrote that the pushing host never saw.
 */
import { describe, expect, it } from "vitest";
import {
  dir,
  freshWorkspace,
  gone,
  ok,
  refused,
  smallFile,
  symlink,
  TestHost,
  type TestPushEntry,
  type Workspace,
} from "../helpers.ts";

/** Hosts A and B share `dir/x.txt` at rev 1; B then adds `dir/new.txt` at rev 2. */
async function sharedDirThenNewChild(ws: Workspace): Promise<{ a: TestHost; b: TestHost }> {
  const a = new TestHost(ws);
  const b = new TestHost(ws);
  const x = await smallFile("dir/x.txt", "x");
  await a.push([dir("dir"), x.entry], [x.object]);
  const added = await smallFile("dir/new.txt", "B's work");
  await b.push([added.entry], [added.object]);
  return { a, b };
}

/** A push from `host` that has pulled through `pulled`. */
function pushAfter(host: TestHost, pulled: number, entries: readonly TestPushEntry[], objects = [] as never[]) {
  return { ...host.packRequest(entries, objects), pulled };
}

export function subtreeConflictSuite(): void {
  describe("push over a replaced subtree", () => {
    it("refuses a directory delete that would tombstone a child another host added since, naming it", async () => {
      const ws = freshWorkspace();
      const { a } = await sharedDirThenNewChild(ws);
      const before = await a.pullAll();
      const { status, error } = await refused(
        ws,
        "push",
        pushAfter(a, 1, [
          { ...gone("dir"), base: 1 },
          { ...gone("dir/x.txt"), base: 1 },
        ]),
      );
      expect(status).toBe(409);
      expect(error.code).toBe("conflict");
      expect(error.conflicts).toEqual([{ path: "dir/new.txt", rev: 2, under: "dir" }]);
      expect(error.message).toContain("dir/new.txt");
      // Nothing changed: B's file is still live, and no rev was taken.
      const after = await a.pullAll();
      expect(after).toEqual(before);
    });

    it.each([
      ["a file", async () => (await smallFile("dir", "now a file")).entry],
      ["a symlink", async () => symlink("dir", "elsewhere")],
    ])("refuses turning the directory into %s over a child another host added since", async (_, replacement) => {
      const ws = freshWorkspace();
      const { a } = await sharedDirThenNewChild(ws);
      const entry = await replacement();
      const objects = entry.kind === "file" ? [(await smallFile("dir", "now a file")).object] : [];
      const { error } = await refused(
        ws,
        "push",
        pushAfter(
          a,
          1,
          [
            { ...entry, base: 1 },
            { ...gone("dir/x.txt"), base: 1 },
          ],
          objects as never[],
        ),
      );
      expect(error.code).toBe("conflict");
      expect(error.conflicts).toEqual([{ path: "dir/new.txt", rev: 2, under: "dir" }]);
    });

    it("accepts the delete once the host has pulled the child, or names it in the pack", async () => {
      const ws = freshWorkspace();
      const { a } = await sharedDirThenNewChild(ws);
      // Pulled through rev 2: A saw dir/new.txt, so deleting dir deletes it knowingly.
      await ok(ws, "push", pushAfter(a, 2, [{ ...gone("dir"), base: 1 }]));
      const other = freshWorkspace();
      const hosts = await sharedDirThenNewChild(other);
      await ok(
        other,
        "push",
        pushAfter(hosts.a, 1, [
          { ...gone("dir"), base: 1 },
          { ...gone("dir/new.txt"), base: 2 },
        ]),
      );
      const { entries } = await new TestHost(other).pullAll();
      expect(entries.filter((e) => e.kind !== "gone")).toEqual([]);
    });

    it("does not count the pushing host's own children, nor children already deleted", async () => {
      const ws = freshWorkspace();
      const a = new TestHost(ws);
      const b = new TestHost(ws);
      const mine = await smallFile("dir/mine.txt", "a");
      await a.push([dir("dir"), mine.entry], [mine.object]);
      const theirs = await smallFile("dir/theirs.txt", "b");
      await b.push([theirs.entry], [theirs.object]);
      await b.push([gone("dir/theirs.txt")]);
      const again = await smallFile("dir/mine2.txt", "a2");
      await a.push([again.entry], [again.object]);
      await ok(ws, "push", pushAfter(a, 1, [{ ...gone("dir"), base: 1 }]));
    });

    it("uses the replacing entry's base when the pack does not say what the host pulled", async () => {
      const ws = freshWorkspace();
      const { a } = await sharedDirThenNewChild(ws);
      const { error } = await refused(ws, "push", a.packRequest([{ ...gone("dir"), base: 1 }]));
      expect(error.conflicts).toEqual([{ path: "dir/new.txt", rev: 2, under: "dir" }]);
      // A base at or past the child's rev means the host agreed with a state after it.
      await ok(ws, "push", a.packRequest([{ ...gone("dir"), base: 2 }]));
    });

    it("lets a write without base replace the subtree unconditionally (last writer wins)", async () => {
      const ws = freshWorkspace();
      const { a } = await sharedDirThenNewChild(ws);
      await ok(ws, "push", pushAfter(a, 0, [gone("dir")]));
    });

    it("names each child once when the pack replaces nested directories", async () => {
      const ws = freshWorkspace();
      const a = new TestHost(ws);
      const b = new TestHost(ws);
      await a.push([dir("d"), dir("d/sub")]);
      const deep = await smallFile("d/sub/deep.txt", "b");
      await b.push([deep.entry], [deep.object]);
      const { error } = await refused(
        ws,
        "push",
        pushAfter(a, 1, [
          { ...gone("d"), base: 1 },
          { ...gone("d/sub"), base: 1 },
        ]),
      );
      expect(error.conflicts).toEqual([{ path: "d/sub/deep.txt", rev: 2, under: "d" }]);
    });

    it("refuses a pulled field that is not an unsigned integer", async () => {
      const ws = freshWorkspace();
      const a = new TestHost(ws);
      const { status, error } = await refused(ws, "push", { ...a.packRequest([dir("d")]), pulled: -1 });
      expect(status).toBe(400);
      expect(error.field).toBe("pulled");
    });
  });
}
