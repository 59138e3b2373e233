/**
 * Push refuses ferry's own names on a host (`.ferry`, `.ferry-tmp-*`,
 * `.ferry-server`) as any segment, over HTTP and over a socket, for every
 * kind of entry, tombstones included, and stores nothing (PROTOCOL.md §3.1).
 * Stored, such a path is one every host refuses on every pull. The same
 * rule on the object's own door: test/core/suites/bad-input.ts.
 */
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CBOR_CONTENT_TYPE, decodeCbor, encodeCbor } from "../../protocol/cbor.ts";
import { joinHashes } from "../../protocol/hash.ts";
import { randomId, smallFile } from "./helpers.ts";
import { BASE, freshName, openSocket, stubOf, tokenFor } from "./ws-client.ts";

const RESERVED = [".ferry", "deep/er/.ferry", ".ferry/store.db", "a/.ferry-tmp-7-1", ".ferry-server/do/x.sqlite"];

async function entriesAt(path: string): Promise<Record<string, unknown>[]> {
  const f = await smallFile(path, "x");
  return [
    { ...f.entry, chunks: joinHashes(f.entry.chunks) },
    { kind: "dir", path, mode: 0o755, mtime: 0 },
    { kind: "symlink", path, target: "t" },
    { kind: "gone", path },
  ];
}

function pushOf(entry: Record<string, unknown>): Record<string, unknown> {
  return { hostId: randomId(), start: { rev: 0, path: null }, end: { rev: 1, path: null }, entries: [entry] };
}

describe("push of ferry's own names", () => {
  it("is refused over HTTP with invalid_path naming the path, for every kind, storing nothing", async () => {
    const ws = freshName("reserved");
    for (const path of RESERVED) {
      for (const entry of await entriesAt(path)) {
        const res = await SELF.fetch(`${BASE}/${ws}/push`, {
          method: "POST",
          headers: { "content-type": CBOR_CONTENT_TYPE, authorization: `Bearer ${tokenFor(ws)}` },
          body: encodeCbor(pushOf(entry)),
        });
        const { error } = decodeCbor(new Uint8Array(await res.arrayBuffer())) as { error: Record<string, unknown> };
        expect([entry.kind, res.status, error.code, error.path]).toEqual([entry.kind, 400, "invalid_path", path]);
      }
    }
    expect(await stubOf(ws).stats()).toMatchObject({ rev: 0, files: 0, dirs: 0, symlinks: 0, objects: 0 });
  });

  it("is refused over a socket likewise", async () => {
    const ws = freshName("reserved");
    const s = await openSocket(ws);
    for (const path of RESERVED) {
      for (const entry of await entriesAt(path)) {
        const answer = await s.request("push", pushOf(entry));
        expect([entry.kind, answer.error?.code, answer.error?.path]).toEqual([entry.kind, "invalid_path", path]);
      }
    }
    expect(await stubOf(ws).stats()).toMatchObject({ rev: 0, files: 0, dirs: 0, symlinks: 0 });
  });
});
