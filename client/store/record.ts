/** Converting path records to and from their SQLite row. */
import type { Entry } from "../../protocol/entry.ts";
import { HASH_BYTES, splitHashes } from "../../protocol/hash.ts";
import type { PathRecord } from "./store.ts";

export interface PathRow {
  path: string;
  kind: string;
  mode: number;
  mtime: number;
  size: number;
  chunks: Uint8Array | null;
  sizes: Uint8Array | null;
  target: string | null;
  stat: string | null;
  host_rev: number;
  server_rev: number;
  agreed: Uint8Array | null;
}

export function recordToRow(r: PathRecord): PathRow {
  const e = r.entry;
  return {
    path: e.path,
    kind: e.kind,
    mode: e.kind === "file" || e.kind === "dir" ? e.mode : 0,
    mtime: e.kind === "file" || e.kind === "dir" ? e.mtime : 0,
    size: e.kind === "file" ? e.size : 0,
    chunks: e.kind === "file" ? joinHashes(e.chunks) : null,
    sizes: e.kind === "file" ? packSizes(r.sizes) : null,
    target: e.kind === "symlink" ? e.target : null,
    stat: r.stat,
    host_rev: r.hostRev,
    server_rev: r.serverRev,
    agreed: r.agreed,
  };
}

export function rowToRecord(row: PathRow): PathRecord {
  return {
    entry: rowEntry(row),
    sizes: row.sizes ? unpackSizes(row.sizes) : [],
    stat: row.stat,
    hostRev: row.host_rev,
    serverRev: row.server_rev,
    agreed: row.agreed ? new Uint8Array(row.agreed) : null,
  };
}

function rowEntry(row: PathRow): Entry {
  switch (row.kind) {
    case "file":
      return {
        kind: "file",
        path: row.path,
        mode: row.mode,
        mtime: row.mtime,
        size: row.size,
        // SQLite blobs arrive as Buffers: copy into plain Uint8Arrays at this boundary.
        chunks: splitHashes(new Uint8Array(row.chunks ?? new Uint8Array(0))),
      };
    case "dir":
      return { kind: "dir", path: row.path, mode: row.mode, mtime: row.mtime };
    case "symlink":
      return { kind: "symlink", path: row.path, target: row.target ?? "" };
    case "gone":
      return { kind: "gone", path: row.path };
    default:
      // Only this module writes the column: another value means a corrupt store.
      throw new Error(`store: unknown kind '${row.kind}' at '${row.path}'`);
  }
}

export function joinHashes(hashes: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(hashes.length * HASH_BYTES);
  for (const [i, h] of hashes.entries()) out.set(h, i * HASH_BYTES);
  return out;
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
