/**
 * A pull decides a path under a directory it made without looking at the
 * disk (apply-state.ts underMadeDir): nothing was there at the mkdir. Local
 * work can still land there before the pull reaches the path: a directory
 * (a build's `mkdir -p`), or a file where the server has a directory. A
 * directory where a directory goes is the same state and no refusal; a
 * file is local work, kept; the hosts converge.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, newWorkspace, openHost, TRANSPORTS } from "./support/hosts.ts";
import { snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const factory = (TRANSPORTS[0] as (typeof TRANSPORTS)[number]).factory;

/** Pushes d/a (a file) and d/b, d/c (directories, d/c holding a file) from a new host. */
async function pushed() {
  const ws = newWorkspace();
  const src = openHost(ws, { storeKind: "memory", factory });
  writeTree(src.root, { "d/a": "a\n", "d/c/f": "f\n" });
  mkdirSync(join(src.root, "d/b"));
  await src.engine.sync();
  return { ws, src };
}

describe("a pull raced under a directory it made", () => {
  it("takes a directory made locally where the server's directory goes, without a refusal", async () => {
    const { ws, src } = await pushed();
    const dst = openHost(ws, {
      storeKind: "memory",
      factory,
      beforeReplace: (path) => {
        if (path === "d/a") mkdirSync(join(dst.root, "d/b"));
      },
    });
    const report = await dst.engine.sync();
    expect(report.refused).toEqual([]);
    expect(snapshot(dst.root)).toEqual(snapshot(src.root));
    const again = await dst.engine.sync();
    expect(again.refused).toEqual([]);
  });

  it("keeps a file made locally where the server's directory goes, and the hosts converge", async () => {
    const { ws, src } = await pushed();
    const dst = openHost(ws, {
      storeKind: "memory",
      factory,
      beforeReplace: (path) => {
        if (path === "d/a") writeFileSync(join(dst.root, "d/b"), "made locally\n");
      },
    });
    await dst.engine.sync();
    const kept = Object.entries(snapshot(dst.root))
      .filter(([p, what]) => p.startsWith("d/b") && what.startsWith("file "))
      .map(([p]) => p);
    expect(kept.map((p) => readFileSync(join(dst.root, p), "utf8"))).toContain("made locally\n");
    await dst.engine.sync();
    await src.engine.sync();
    await dst.engine.sync();
    expect(snapshot(src.root)).toEqual(snapshot(dst.root));
  });
});
