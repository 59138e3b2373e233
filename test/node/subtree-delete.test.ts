/**
 * Issue 9 case 1, end to end: a host that deletes a directory (or turns it
 * into a file or symlink) without having seen a child another host added
 * there must not delete that child anywhere. The server refuses the push
 * naming the child (PROTOCOL.md §4.5 rule 7); the host's conflict loop pulls
 * it, keeps it, and pushes the rest of its change.
 */
import { existsSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, MATRIX, twoSyncedHosts } from "./support/hosts.ts";
import { snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

describe.each(MATRIX)("a directory replaced over $name with $storeKind stores", ({ factory, storeKind }) => {
  /** A and B share dir/x.txt; B adds dir/new.txt and syncs; A has not pulled it. */
  async function childAddedElsewhere() {
    const { a, b } = await twoSyncedHosts({ "dir/x.txt": "x\n", "other.txt": "o\n" }, { factory, storeKind });
    writeTree(b.root, { "dir/new.txt": "B's work\n" });
    await b.engine.sync();
    return { a, b };
  }

  it.each([
    ["deleted", (root: string) => rmSync(join(root, "dir"), { recursive: true })],
    [
      "turned into a file",
      (root: string) => {
        rmSync(join(root, "dir"), { recursive: true });
        writeFileSync(join(root, "dir"), "a file now\n");
      },
    ],
    [
      "turned into a symlink",
      (root: string) => {
        rmSync(join(root, "dir"), { recursive: true });
        symlinkSync("other.txt", join(root, "dir"));
      },
    ],
  ])("keeps a child another host added when the directory is %s and pushed", async (how, replace) => {
    const { a, b } = await childAddedElsewhere();
    replace(a.root);
    // `ferry push`: no pull first, so only the server can see dir/new.txt.
    const report = await a.engine.sync({ pull: false });
    expect(readFileSync(join(a.root, "dir/new.txt"), "utf8")).toBe("B's work\n");
    await b.engine.sync();
    expect(readFileSync(join(b.root, "dir/new.txt"), "utf8")).toBe("B's work\n");
    // A's own change to what it had seen still reaches the server.
    expect(existsSync(join(b.root, "dir/x.txt"))).toBe(false);
    if (how === "turned into a file") {
      const copy = report.conflicts[0]?.copy as string;
      expect(readFileSync(join(b.root, copy), "utf8")).toBe("a file now\n");
    }
    if (how === "turned into a symlink") {
      expect(readlinkSync(join(b.root, report.conflicts[0]?.copy as string))).toBe("other.txt");
    }
    await a.engine.sync();
    expect(snapshot(a.root)).toEqual(snapshot(b.root));
    expect(a.store.pendingCount(a.store.position().acked.rev)).toBe(0);
  });

  it("deletes the directory when the host had pulled the child before deleting it", async () => {
    const { a, b } = await childAddedElsewhere();
    await a.engine.sync();
    rmSync(join(a.root, "dir"), { recursive: true });
    const report = await a.engine.sync({ pull: false });
    expect(report.conflicts).toEqual([]);
    await b.engine.sync();
    expect(existsSync(join(b.root, "dir/new.txt"))).toBe(false);
    expect(existsSync(join(b.root, "dir/x.txt"))).toBe(false);
    await a.engine.sync();
    expect(snapshot(a.root)).toEqual(snapshot(b.root));
  });
});
