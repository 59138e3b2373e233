/** Converting path records to and from their SQLite row. */
import type { Entry } from "../../protocol/entry.ts";
import { joinHashes, splitHashes } from "../../protocol/hash.ts";
import type { PathRecord } from "./store.ts";

/** The columns of a path's row, in the order of PathValues. */
export const PATH_COLUMNS = "path, kind, mode, mtime, size, chunks, sizes, target, stat, host_rev, server_rev, agreed";

/**
 * A path's row as positional values, in the order of PATH_COLUMNS: written
 * and read by position (better-sqlite3's raw rows), not as objects keyed by
 * column name, which cost a property per column for every path a first push
 * stamps and reads back (issue 13).
 */
export type PathValues = [
  path: string,
  kind: string,
  mode: number,
  mtime: number,
  size: number,
  chunks: Uint8Array | null,
  sizes: Uint8Array | null,
  target: string | null,
  stat: string | null,
  host_rev: number,
  server_rev: number,
  agreed: Uint8Array | null,
];

export function recordValues(r: PathRecord): PathValues {
  const e = r.entry;
  return [
    e.path,
    e.kind,
    e.kind === "file" || e.kind === "dir" ? e.mode : 0,
    e.kind === "file" || e.kind === "dir" ? e.mtime : 0,
    e.kind === "file" ? e.size : 0,
    e.kind === "file" ? joinHashes(e.chunks) : null,
    e.kind === "file" ? packSizes(r.sizes) : null,
    e.kind === "symlink" ? e.target : null,
    r.stat,
    r.hostRev,
    r.serverRev,
    r.agreed,
  ];
}

export function rowToRecord(row: PathValues): PathRecord {
  const [, , , , , , sizes, , stat, hostRev, serverRev, agreed] = row;
  return {
    entry: rowEntry(row),
    sizes: sizes ? unpackSizes(sizes) : [],
    stat,
    hostRev,
    serverRev,
    agreed: agreed ? new Uint8Array(agreed) : null,
  };
}

function rowEntry([path, kind, mode, mtime, size, chunks, , target]: PathValues): Entry {
  switch (kind) {
    case "file":
      // SQLite blobs arrive as Buffers: copy into plain Uint8Arrays at this boundary.
      return {
        kind: "file",
        path,
        mode,
        mtime,
        size,
        chunks: splitHashes(new Uint8Array(chunks ?? new Uint8Array(0))),
      };
    case "dir":
      return { kind: "dir", path, mode, mtime };
    case "symlink":
      return { kind: "symlink", path, target: target ?? "" };
    case "gone":
      return { kind: "gone", path };
    default:
      // Only this module writes the column: another value means a corrupt store.
      throw new Error(`store: unknown kind '${kind}' at '${path}'`);
  }
}

function packSizes(sizes: readonly number[]): Uint8Array {
  const out = new Uint8Array(sizes.length * 4);
  const view = new DataView(out.buffer);
  for (const [i, s] of sizes.entries()) view.setUint32(i * 4, s, true);
  return out;
}

function unpackSizes(blob: Uint8Array): number[] {
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const out: number[] = [];
  for (let at = 0; at + 4 <= blob.length; at += 4) out.push(view.getUint32(at, true));
  return out;
}
