/**
 * What a reader sees of a host: a read-only token never learns host ids (an
 * id is what a pushing host names itself by), so stats and revs show it a
 * tag instead, the first 8 bytes of SHA-256 over the id, hex. Stable, so a
 * page can tell hosts apart and match revs to the hosts table; not an id.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { toHex } from "../../protocol/hash.ts";
import type { Db } from "./db.ts";
import { readLabel } from "./hosts.ts";

const TAG_BYTES = 8;

export function hostTag(id: Uint8Array): string {
  return toHex(sha256(id).subarray(0, TAG_BYTES));
}

/**
 * The host as `log` shows it (CBOR, PROTOCOL.md §4.7): its id for
 * read-write; for read-only, the first 16 bytes of SHA-256 over the id,
 * whose first 8 are its tag. An id's size, so one decoder reads both.
 */
export function shownHostBytes(id: Uint8Array, withHostIds: boolean): Uint8Array {
  return withHostIds ? id : sha256(id).subarray(0, 16);
}

/** The host as a caller with these rights may see it: its id for read-write, its tag for read-only. */
export function shownHost(id: Uint8Array, withHostIds: boolean): string {
  return withHostIds ? toHex(id) : hostTag(id);
}

/**
 * The readable `label` each host gave itself at hello, if any, read once
 * per host a page names (log.ts puts it on every state and rev it lists).
 */
export function hostLabels(db: Db): (id: Uint8Array) => { label?: string } {
  const seen = new Map<string, { label?: string }>();
  return (id) => {
    const key = toHex(id);
    let named = seen.get(key);
    if (named === undefined) {
      const label = readLabel(db, id);
      named = label === undefined ? {} : { label };
      seen.set(key, named);
    }
    return named;
  };
}
