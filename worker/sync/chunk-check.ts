/**
 * Push's checks of the chunks its changed files name (PROTOCOL.md §4.5,
 * rules 5 and 6), run by apply.ts before anything is written:
 * referential integrity (every chunk stored or inline) and the size rule
 * (a file's size is the sum of its chunks' sizes, and no chunk is empty).
 * A file that broke the size rule would be stored and then fail every
 * host that pulls it, so it is refused here, where the sizes are known.
 */
import { ProtocolError } from "../../protocol/errors.ts";
import { toHex } from "../../protocol/hash.ts";
import type { PushEntry } from "../../protocol/push.ts";
import type { Db } from "./db.ts";
import { probeSizes } from "./hash-list.ts";

/** A chunk the push carries (inline, or already in an R2 pack): its hash and size. */
export interface Carried {
  readonly hash: Uint8Array;
  readonly size: number;
}

export function checkChunks(db: Db, carried: readonly Carried[], changed: readonly PushEntry[]): ProtocolError | null {
  // Every distinct chunk's size: carried objects by theirs, the rest from storage.
  const sizes = new Map<string, number>();
  for (const o of carried) sizes.set(toHex(o.hash), o.size);
  const asked = new Map<string, Uint8Array>();
  for (const e of changed) {
    if (e.kind !== "file") continue;
    for (const hash of e.chunks) {
      const hex = toHex(hash);
      if (!sizes.has(hex)) asked.set(hex, hash);
    }
  }
  const hashes = [...asked.values()];
  const stored = probeSizes(db, hashes);
  const missing: Uint8Array[] = [];
  hashes.forEach((hash, i) => {
    const size = stored[i] as number;
    if (size < 0) missing.push(hash);
    else sizes.set(toHex(hash), size);
  });
  if (missing.length > 0) {
    return new ProtocolError("missing_objects", `${missing.length} chunk(s) are not stored; upload them first`, {
      missing,
    });
  }
  for (const e of changed) {
    if (e.kind !== "file") continue;
    let sum = 0;
    for (const hash of e.chunks) {
      const size = sizes.get(toHex(hash)) as number;
      if (size === 0) return sizeRefusal(e.path, "names an empty chunk (an empty file has no chunks)");
      sum += size;
    }
    if (sum !== e.size) return sizeRefusal(e.path, `size is ${e.size} but its chunks hold ${sum} bytes`);
  }
  return null;
}

function sizeRefusal(path: string, what: string): ProtocolError {
  return new ProtocolError("bad_request", `${path}: ${what}`, { field: "size", path });
}
