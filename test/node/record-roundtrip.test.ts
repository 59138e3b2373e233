/**
 * Every shape of path record through the host store and back (record.ts's
 * row, every column): files with no, one and many chunks, chunk sizes at
 * the edges of their four bytes, sizes past 32 bits, negative mtimes,
 * directories, symlinks (empty and unicode targets), tombstones; stats
 * unset, empty and set; agreed hashes or none; a path's record replaced by
 * one of another kind, so that no column of the old one leaks. Read back by
 * get, all, under and pending, and from disk after a reopen. Seeded.
 */
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../client/store/sqlite-store.ts";
import type { HostStore, PathRecord, StoreKind } from "../../client/store/store.ts";
import type { Entry } from "../../protocol/entry.ts";
import { cleanup, STORE_KINDS, tempDir } from "./support/hosts.ts";
import { prng } from "./support/soak-writer.ts";

afterEach(cleanup);

function randomRecord(random: () => number, path: string): PathRecord {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  const int = (n: number) => Math.floor(random() * n);
  const hash = () => Uint8Array.from({ length: 32 }, () => int(256));
  const kind = pick(["file", "file", "dir", "symlink", "gone"] as const);
  const mode = pick([0, 0o644, 0o755, 0o7777, 0o600]);
  const mtime = pick([0, 1, -1, -86_400_000, 1_700_000_000_123, 2 ** 53 - 1, -(2 ** 53 - 1)]);
  let entry: Entry;
  let sizes: number[] = [];
  if (kind === "file") {
    const chunks = Array.from({ length: pick([0, 1, 1, 2, 7, 300]) }, hash);
    sizes = chunks.map(() => pick([0, 1, 65_536, 2 ** 32 - 1, int(2 ** 32)]));
    entry = { kind, path, mode, mtime, size: pick([0, 1, 2 ** 32, 2 ** 40 + 3, 2 ** 53 - 1]), chunks };
  } else if (kind === "dir") entry = { kind, path, mode, mtime };
  else if (kind === "symlink") entry = { kind, path, target: pick(["", "t", "../x", "é/\u{1F600}", "a\u0001b"]) };
  else entry = { kind, path };
  return {
    entry,
    sizes,
    stat: pick([null, "", "f3:1:2:33188", "d:\u{1F600}"]),
    hostRev: pick([0, 1, int(1000), 2 ** 53 - 1]),
    serverRev: pick([0, 1, int(1000), 2 ** 53 - 1]),
    agreed: random() < 0.5 ? null : hash(),
  };
}

const PATHS = ["a", "a.js", "a/b", "a b", "é", "e\u0301", "\u{1F600}", "d/e/f", "x".repeat(255), "a\u0001"];

describe.each(STORE_KINDS)("%s store", (kind: StoreKind) => {
  let store: HostStore | undefined;
  afterEach(() => store?.close());

  it("gives back every record shape exactly as put, whatever it replaced", () => {
    const random = prng(kind === "disk" ? 11 : 12);
    const dir = tempDir("record");
    store = openStore(kind, dir);
    const expected = new Map<string, PathRecord>();
    for (let n = 0; n < 600; n++) {
      const path = PATHS[Math.floor(random() * PATHS.length)] as string;
      const record = randomRecord(random, path);
      store.put(record);
      expected.set(path, record);
      expect(store.get(path), `put ${n}: ${JSON.stringify(record.entry)}`).toEqual(record);
    }
    const check = (s: HostStore) => {
      const all = [...s.all()];
      expect(new Map(all.map((r) => [r.entry.path, r]))).toEqual(expected);
      for (const [path, record] of expected) expect(s.get(path)).toEqual(record);
      expect(s.under("a")).toEqual(all.filter((r) => r.entry.path.startsWith("a/")));
      const pending = [...expected.values()].filter((r) => r.hostRev > 0).sort((x, y) => x.hostRev - y.hostRev);
      expect(new Set(s.pending(0, 1000))).toEqual(new Set(pending));
    };
    check(store);
    if (kind === "disk") {
      store.close();
      store = openStore(kind, dir);
      check(store);
    }
  });
});
