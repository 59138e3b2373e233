/**
 * Push's checks of the chunks its changed files name (PROTOCOL.md §4.5,
 * rules 5 and 6), run by apply.ts before anything is written:
 * referential integrity (every chunk stored or inline) and the size rule
 * (a file's size is the sum of its chunks' sizes, and no chunk is empty).
 * A file that broke the size rule would be stored and then fail every
 * host that pulls it, so it is refused here, where the sizes are known.
 *
 * Every file's chunk list is probed as it came, one hash list (protocol
 * version 4), repeats and all: no object or hex string per chunk. A map
 * by hex of 60,000 chunks, built and dropped by every refused push, was
 * most of what sixteen such pushes left for V8 to collect (issue 28); the
 * refusal names at most MAX_MISSING_NAMED of the chunks it lacks for the
 * same reason (its answer was as large as the push).
 */
import { concatBytes } from "../../protocol/cbor-parts.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import { HASH_BYTES, type HashList, hashAt, hashCount, hashesEqual, toHex, wordAt } from "../../protocol/hash.ts";
import { MAX_MISSING_NAMED, type PushEntry } from "../../protocol/push.ts";
import type { Db } from "./db.ts";
import { probeSizes } from "./hash-list.ts";

/** A chunk the push carries (inline, or already in an R2 pack, apply.ts): its hash and size. */
export interface Carried {
  readonly hash: Uint8Array;
  readonly size: number;
}

export function checkChunks(db: Db, carried: readonly Carried[], changed: readonly PushEntry[]): ProtocolError | null {
  const all: HashList = concatBytes(changed.flatMap((e) => (e.kind === "file" ? [e.chunks] : [])));
  // Each chunk's size in the order the files list them: stored, else inline (at most maxObjects of those).
  const sizes = probeSizes(db, all);
  const inlineSize = inlineSizes(carried);
  const named = new Map<string, Uint8Array>();
  let lacking = 0;
  for (let i = 0; i < sizes.length; i++) {
    if ((sizes[i] as number) >= 0) continue;
    const size = inlineSize(all, i);
    if (size !== undefined) {
      sizes[i] = size;
      continue;
    }
    lacking++;
    if (named.size < MAX_MISSING_NAMED) {
      // A copy: a view would hold the whole joined list for as long as the refusal lives.
      const hash = hashAt(all, i).slice();
      named.set(toHex(hash), hash);
    }
  }
  if (lacking > 0) {
    return new ProtocolError(
      "missing_objects",
      `${lacking} chunk reference(s) name no stored chunk; upload them first`,
      {
        missing: [...named.values()],
      },
    );
  }
  let at = 0;
  for (const e of changed) {
    if (e.kind !== "file") continue;
    let sum = 0;
    for (let i = 0; i < hashCount(e.chunks); i++) {
      const size = sizes[at++] as number;
      if (size === 0) return sizeRefusal(e.path, "names an empty chunk (an empty file has no chunks)");
      sum += size;
    }
    if (sum !== e.size) return sizeRefusal(e.path, `size is ${e.size} but its chunks hold ${sum} bytes`);
  }
  return null;
}

/**
 * The size of the `i`th hash of a list when the push carries it, found by
 * its first four bytes and then compared: no string per lookup, as a
 * refused push may look up each of 60,000 chunks.
 */
function inlineSizes(carried: readonly Carried[]): (list: HashList, i: number) => number | undefined {
  if (carried.length === 0) return () => undefined;
  const byPrefix = new Map<number, Carried[]>();
  for (const o of carried) {
    const key = wordAt(o.hash, 0);
    const same = byPrefix.get(key);
    if (same) same.push(o);
    else byPrefix.set(key, [o]);
  }
  return (list, i) => {
    const same = byPrefix.get(wordAt(list, i * HASH_BYTES));
    if (same === undefined) return undefined;
    const hash = hashAt(list, i);
    return same.find((o) => hashesEqual(o.hash, hash))?.size;
  };
}

function sizeRefusal(path: string, what: string): ProtocolError {
  return new ProtocolError("bad_request", `${path}: ${what}`, { field: "size", path });
}
