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
 * same reason (its answer was as large as the push), and is made at the
 * first span of chunks that lacks any (PROBE_SPAN): a host told of some
 * learns of the rest with `has` (PROTOCOL.md §9.2).
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

/**
 * Chunks probed at once after the first MAX_MISSING_NAMED: a push is refused
 * at the first span that lacks any, so one that lacks chunks from the start
 * (a host that never uploaded them) costs a probe of 1,024, not of all of
 * them. Sixteen sockets sending 60,000-chunk pushes, each probed whole
 * (the list joined, copied into seek order and bound, ~5 MB a push), grew
 * workerd by 70-84 MiB, and by 18 MiB with no probe at all (issue 28).
 */
const PROBE_SPAN = 16 * 1024;

export function checkChunks(db: Db, carried: readonly Carried[], changed: readonly PushEntry[]): ProtocolError | null {
  const all: HashList = concatBytes(changed.flatMap((e) => (e.kind === "file" ? [e.chunks] : [])));
  const count = hashCount(all);
  // Each chunk's size in the order the files list them: stored, else inline (at most maxObjects of those).
  const sizes = new Float64Array(count);
  const inlineSize = inlineSizes(carried);
  for (let from = 0; from < count; ) {
    const to = Math.min(count, from === 0 ? MAX_MISSING_NAMED : from + PROBE_SPAN);
    sizes.set(probeSizes(db, all.subarray(from * HASH_BYTES, to * HASH_BYTES)), from);
    const refusal = missingIn(all, sizes, { from, to }, inlineSize);
    if (refusal) return refusal;
    from = to;
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
 * Fills in the inline sizes of chunks `from`..`to` of `all` that are not
 * stored (-1), and refuses when any is neither: the refusal names at most
 * MAX_MISSING_NAMED of them, each once, and counts those of this span.
 */
function missingIn(
  all: HashList,
  sizes: Float64Array,
  { from, to }: { from: number; to: number },
  inlineSize: (list: HashList, i: number) => number | undefined,
): ProtocolError | null {
  const named = new Map<string, Uint8Array>();
  let lacking = 0;
  for (let i = from; i < to; i++) {
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
  if (lacking === 0) return null;
  const where = to === hashCount(all) && from === 0 ? "" : ` among chunks ${from + 1}-${to} of ${hashCount(all)}`;
  return new ProtocolError(
    "missing_objects",
    `${lacking} chunk reference(s)${where} name no stored chunk; upload them first`,
    { missing: [...named.values()] },
  );
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
