/**
 * A pulled change never undoes a state this host agreed with the server at
 * a newer rev: a host that pushed `d/new` (its own write, which pulls do not
 * echo) and then pulls another host's older deletion of `d` keeps `d/new`,
 * as the server does.
 */
import { rmSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, MATRIX, twoSyncedHosts } from "./support/hosts.ts";
import { pastRacyWindow, snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

describe.each(MATRIX)("an older server change over $name with $storeKind stores", ({ factory, storeKind }) => {
  it("does not remove a child this host pushed after the deletion of its directory", async () => {
    const { a, b } = await twoSyncedHosts({ "d/x.txt": "x\n", "other.txt": "o\n" }, { factory, storeKind });
    rmSync(join(a.root, "d"), { recursive: true });
    await a.engine.sync();
    writeTree(b.root, { "d/new.txt": "new on b\n" });
    // Old enough that the scan trusts its fingerprint (a just-written file is read again, which hides the bug):
    // its mtime set back, and its ctime, which no utimes ages, waited out.
    const past = Date.now() / 1000 - 60;
    utimesSync(join(b.root, "d/new.txt"), past, past);
    await pastRacyWindow();
    await b.engine.sync({ pull: false });
    await b.engine.sync();
    await a.engine.sync();
    expect(snapshot(b.root)["d/new.txt"]).toBeDefined();
    expect(snapshot(a.root)).toEqual(snapshot(b.root));
  });
});
