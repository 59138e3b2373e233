import { readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, MATRIX, twoSyncedHosts } from "./support/hosts.ts";
import { snapshot } from "./support/tree.ts";

afterEach(cleanup);

describe.each(MATRIX)("a host that lost a race over $name with $storeKind stores", ({ factory, storeKind }) => {
  it("keeps a local symlink that replaced a directory the other host changed, and pushes again", async () => {
    const { a, b } = await twoSyncedHosts({ "dir/x.txt": "v1\n", "other.txt": "o\n" }, { factory, storeKind });

    rmSync(join(a.root, "dir"), { recursive: true });
    symlinkSync("other.txt", join(a.root, "dir"));
    writeFileSync(join(b.root, "dir/x.txt"), "edited on b\n");
    await b.engine.sync();
    const report = await a.engine.sync();
    expect(report.conflicts.map((c) => c.path)).toEqual(["dir"]);
    const copy = report.conflicts[0]?.copy as string;
    expect(readlinkSync(join(a.root, copy))).toBe("other.txt");
    expect(readFileSync(join(a.root, "dir/x.txt"), "utf8")).toBe("edited on b\n");

    // Nothing stays pending: a later change pushes without a conflict.
    writeFileSync(join(a.root, "later.txt"), "later\n");
    const again = await a.engine.sync();
    expect(again.conflicts).toEqual([]);
    expect(a.store.pendingCount(a.store.position().acked.rev)).toBe(0);
    await b.engine.sync();
    expect(snapshot(b.root)).toEqual(snapshot(a.root));
  });

  it("takes another host's directory-to-symlink swap without refusing the tombstones under it", async () => {
    const { a, b } = await twoSyncedHosts({ "dir/x.txt": "v1\n", "dir/sub/y.txt": "y\n" }, { factory, storeKind });
    rmSync(join(a.root, "dir"), { recursive: true });
    symlinkSync("elsewhere", join(a.root, "dir"));
    await a.engine.sync();
    const report = await b.engine.sync();
    expect(report.refused).toEqual([]);
    expect(readlinkSync(join(b.root, "dir"))).toBe("elsewhere");
    expect(snapshot(b.root)).toEqual(snapshot(a.root));
  });

  it("keeps a local file that replaced a directory the other host changed", async () => {
    const { a, b } = await twoSyncedHosts({ "dir/x.txt": "v1\n" }, { factory, storeKind });

    rmSync(join(a.root, "dir"), { recursive: true });
    writeFileSync(join(a.root, "dir"), "a file now\n");
    writeFileSync(join(b.root, "dir/x.txt"), "edited on b\n");
    await b.engine.sync();
    const report = await a.engine.sync();
    expect(report.conflicts.map((c) => c.path)).toEqual(["dir"]);
    expect(readFileSync(join(a.root, report.conflicts[0]?.copy as string), "utf8")).toBe("a file now\n");
    expect(readFileSync(join(a.root, "dir/x.txt"), "utf8")).toBe("edited on b\n");
    await b.engine.sync();
    expect(snapshot(b.root)).toEqual(snapshot(a.root));
  });
});
