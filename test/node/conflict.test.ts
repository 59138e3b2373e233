import { mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { HttpTransport } from "../../client/transport/http-transport.ts";
import type { Transport } from "../../client/transport/transport.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import type { OpRequest } from "../../protocol/ops.ts";
import { cleanup, type Host, MATRIX, newWorkspace, openHost, twoSyncedHosts } from "./support/hosts.ts";
import { snapshot, writeTree } from "./support/tree.ts";

afterEach(cleanup);

const read = (root: string, path: string) => readFileSync(join(root, path), "utf8");

describe.each(MATRIX)("concurrent changes over $name with $storeKind stores", ({ factory, storeKind }) => {
  it("keeps both versions of a file both hosts changed", async () => {
    const { a, b } = await twoSyncedHosts({ "notes.txt": "v1\n" }, { factory, storeKind });
    writeFileSync(join(a.root, "notes.txt"), "from a\n");
    writeFileSync(join(b.root, "notes.txt"), "from b\n");
    await a.engine.sync();
    const report = await b.engine.sync();
    expect(report.conflicts).toHaveLength(1);
    const copy = report.conflicts[0]?.copy as string;
    // No label given to this engine: 8 hex digits of its host id, then the date; the extension stays last.
    expect(copy).toMatch(/^notes\.conflict-[0-9a-f]{8}-\d{8}-\d{6}\.txt$/);
    expect(read(b.root, "notes.txt")).toBe("from a\n");
    expect(read(b.root, copy)).toBe("from b\n");
    await a.engine.sync();
    expect(snapshot(a.root)).toEqual(snapshot(b.root));
  });

  it("keeps both files two hosts created at one path after syncing an empty workspace", async () => {
    // Both hosts pulled the empty workspace (rev 0): the one that syncs second never had the other's
    // file, so its own (saved later) is a concurrent version, not an edit of it (issue 9, soak seeds 57, 60).
    const { a, b } = await twoSyncedHosts({}, { factory, storeKind });
    writeFileSync(join(a.root, "new.txt"), "from a\n");
    await a.engine.sync();
    writeFileSync(join(b.root, "new.txt"), "from b\n");
    const report = await b.engine.sync();
    expect(report.conflicts).toHaveLength(1);
    expect(read(b.root, "new.txt")).toBe("from a\n");
    expect(read(b.root, report.conflicts[0]?.copy as string)).toBe("from b\n");
    await a.engine.sync();
    expect(snapshot(a.root)).toEqual(snapshot(b.root));
  });

  it("resolves a conflict found on push by pulling and pushing the copy", async () => {
    const { a, b } = await twoSyncedHosts({ "f.txt": "v1\n" }, { factory, storeKind });
    writeFileSync(join(a.root, "f.txt"), "a wins the race\n");
    await a.engine.sync();
    writeFileSync(join(b.root, "f.txt"), "b pushes blind\n");
    const report = await b.engine.sync({ pull: false });
    expect(report.conflicts.map((c) => c.path)).toEqual(["f.txt"]);
    await a.engine.sync();
    expect(snapshot(a.root)).toEqual(snapshot(b.root));
    expect(Object.values(snapshot(a.root)).length).toBe(2);
  });

  it("keeps a local edit of a file the other host deleted", async () => {
    const { a, b } = await twoSyncedHosts({ "keep.txt": "v1\n", "other.txt": "o\n" }, { factory, storeKind });
    rmSync(join(a.root, "keep.txt"));
    writeFileSync(join(b.root, "keep.txt"), "edited on b\n");
    await a.engine.sync();
    const report = await b.engine.sync();
    expect(report.conflicts).toEqual([]);
    await a.engine.sync();
    expect(read(a.root, "keep.txt")).toBe("edited on b\n");
    expect(snapshot(a.root)).toEqual(snapshot(b.root));
  });

  it("keeps a directory the other host deleted when new work is in it", async () => {
    const { a, b } = await twoSyncedHosts(
      { "dir/old.txt": "old\n", "dir/sub/deep.txt": "deep\n" },
      { factory, storeKind },
    );
    rmSync(join(a.root, "dir"), { recursive: true });
    writeTree(b.root, { "dir/sub/new.txt": "new on b\n" });
    await a.engine.sync();
    await b.engine.sync();
    expect(Object.keys(snapshot(b.root)).sort()).toEqual(["dir", "dir/sub", "dir/sub/new.txt"]);
    await a.engine.sync();
    expect(snapshot(a.root)).toEqual(snapshot(b.root));
  });

  it("pushes at once a file made again under a directory that was a file for a while", async () => {
    const ws = newWorkspace();
    const pushes: OpRequest<"push">[] = [];
    const a = openHost(ws, { factory: (endpoint) => recordingPushes(factory(endpoint), pushes), storeKind });
    const b = openHost(ws, { factory, storeKind });
    writeTree(a.root, { "dir/x.txt": "v1\n" });
    await a.engine.sync();
    await b.engine.sync();
    rmSync(join(b.root, "dir"), { recursive: true });
    writeFileSync(join(b.root, "dir"), "a file now\n");
    await b.engine.sync();
    // dir/x.txt is tombstoned under a path that is no directory on a: a agrees it is gone at that rev.
    await a.engine.sync();
    rmSync(join(a.root, "dir"));
    writeTree(a.root, { "dir/x.txt": "made again on a\n" });
    pushes.length = 0;
    const report = await a.engine.sync();
    expect(report.conflicts).toEqual([]);
    expect(pushes).toHaveLength(1);
    await b.engine.sync();
    expect(read(b.root, "dir/x.txt")).toBe("made again on a\n");
  });

  it("keeps an unpushed local edit as a conflict copy when pulling over it", async () => {
    const { a, b } = await twoSyncedHosts({ "x.txt": "v1\n" }, { factory, storeKind });
    writeFileSync(join(a.root, "x.txt"), "a v2\n");
    await a.engine.sync();
    writeFileSync(join(b.root, "x.txt"), "b local\n");
    const report = await b.engine.sync({ push: false });
    expect(read(b.root, "x.txt")).toBe("a v2\n");
    expect(read(b.root, report.conflicts[0]?.copy as string)).toBe("b local\n");
  });
});

describe("a push that keeps conflicting", () => {
  /**
   * Before each of A's pushes reaches the server, a rival host writes other
   * bytes at every file path the pack names and pushes them: every round is
   * a conflict again (the copies A makes included), so the engine gives up.
   * With `rounds`, only that many pushes are raced; with `savedAt`, the
   * rival writes each file twice (the first version replaced by its own
   * second), with that modification time.
   */
  function racedBy(rival: Host, options: { rounds?: number; savedAt?: Date } = {}): (inner: Transport) => Transport {
    const { rounds = Number.POSITIVE_INFINITY, savedAt } = options;
    let round = 0;
    const write = async (paths: readonly string[], text: string) => {
      for (const path of paths) {
        mkdirSync(dirname(join(rival.root, path)), { recursive: true });
        writeFileSync(join(rival.root, path), text);
        if (savedAt) utimesSync(join(rival.root, path), savedAt, savedAt);
      }
      await rival.engine.sync();
    };
    return (inner) => ({
      async call(op, req) {
        if (op === "push" && round < rounds) {
          round++;
          const paths = (req as OpRequest<"push">).entries.filter((e) => e.kind === "file").map((e) => e.path);
          // A version before the last gives each path a history on the server.
          if (savedAt) await write(paths, `rival, round ${round}, replaced\n`);
          await write(paths, `rival, round ${round}\n`);
        }
        return inner.call(op, req);
      },
      listen: (events) => inner.listen(events),
      close: () => inner.close(),
    });
  }

  it("gives up with a conflict error that names the paths still in conflict", async () => {
    const ws = newWorkspace();
    const rival = openHost(ws, { factory: (e) => new HttpTransport(e), storeKind: "memory" });
    const race = racedBy(rival);
    const a = openHost(ws, { factory: (e) => race(new HttpTransport(e)), storeKind: "memory" });
    writeTree(a.root, { "hot.txt": "a's work\n" });
    const failed = await a.engine.sync().then(
      () => null,
      (e: unknown) => e,
    );
    expect(failed).toBeInstanceOf(ProtocolError);
    expect((failed as ProtocolError).code).toBe("conflict");
    const message = (failed as ProtocolError).message;
    // The copies A made of its copies: each round's rival write took the path A pushed.
    expect(message).toMatch(
      /^still in conflict after pulling 3 times: hot(\.conflict-[0-9a-f]{8}-\d{8}-\d{6}(-\d+)?)+\.txt$/,
    );
    // Nothing of A's is lost meanwhile: every version it made is on its disk.
    const mine = readdirSync(a.root).filter((p) => read(a.root, p) === "a's work\n");
    expect(mine).toHaveLength(1);
  });

  it("keeps the rival's version as well when the last round reconciles (soak seed 80)", async () => {
    // Three conflicts in a row, then the whole state is compared. The rival's file at A's copy is older
    // than A's: a lost store's rule ("the later save wins") would push A's over it without a copy.
    const ws = newWorkspace();
    const rival = openHost(ws, { factory: (e) => new HttpTransport(e), storeKind: "memory" });
    const race = racedBy(rival, { rounds: 3, savedAt: new Date(Date.now() - 3_600_000) });
    const a = openHost(ws, { factory: (e) => race(new HttpTransport(e)), storeKind: "disk" });
    writeTree(a.root, { "hot.txt": "a's work\n" });
    await a.engine.sync();
    await rival.engine.sync();
    expect(snapshot(rival.root)).toEqual(snapshot(a.root));
    const contents = readdirSync(a.root)
      .filter((n) => n !== ".ferry")
      .map((n) => read(a.root, n))
      .sort();
    expect(contents).toEqual(["a's work\n", "rival, round 1\n", "rival, round 2\n", "rival, round 3\n"]);
  });
});

/** The transport, noting every push request it sends. */
function recordingPushes(inner: Transport, pushes: OpRequest<"push">[]): Transport {
  return {
    call(op, req) {
      if (op === "push") pushes.push(req as OpRequest<"push">);
      return inner.call(op, req);
    },
    listen: (events) => inner.listen(events),
    close: () => inner.close(),
  };
}
