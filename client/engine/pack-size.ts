/**
 * How big a push pack may be: filled to the server's body bytes and to its
 * CBOR items (PROTOCOL.md §2.2, §9.2), by estimates that are upper bounds,
 * so the server never refuses a pack for its size.
 */
import type { PathRecord } from "../store/store.ts";

/** Share of maxBodyBytes a request is filled to: room for CBOR framing and estimates. */
const BODY_FILL = 0.75;
/** Per-object allowance for its hash and CBOR framing when filling a body. */
export const OBJECT_OVERHEAD = 64;

/** The bytes a request body is filled to under the server's limits. */
export function bodyBudget(limits: { readonly maxBodyBytes: number }): number {
  return Math.floor(limits.maxBodyBytes * BODY_FILL);
}

const utf8 = new TextEncoder();

/** The longest prefix of `pending` whose entries fit the body budget and item budget (at least one). */
export function takePack(pending: PathRecord[], budget: number, itemBudget: number): PathRecord[] {
  let bytes = 0;
  let items = 0;
  for (let i = 0; i < pending.length; i++) {
    bytes += estimateEntryBytes(pending[i] as PathRecord);
    items += entryItems(pending[i] as PathRecord);
    if ((bytes > budget || items > itemBudget) && i > 0) return pending.slice(0, i);
  }
  return pending;
}

/** CBOR items a push's envelope may take besides its entries: its other fields, and a socket frame's. */
const ENVELOPE_ITEMS = 64;
/** Items of one inline object: its map, two keys, its hash and its bytes. */
const OBJECT_ITEMS = 5;

/**
 * The items a pack's entries may take within maxBodyItems (PROTOCOL.md
 * §2.2): the rest is kept for the envelope and for as many inline objects
 * as a push may carry.
 */
export function entryItemBudget(limits: { readonly maxBodyItems: number; readonly maxObjects: number }): number {
  return limits.maxBodyItems - ENVELOPE_ITEMS - OBJECT_ITEMS * limits.maxObjects - 1;
}

/** An entry's CBOR items at most: its map, seven keys and their values, and one per chunk hash. */
function entryItems(r: PathRecord): number {
  return 15 + (r.entry.kind === "file" ? r.entry.chunks.length : 0);
}

/** An entry's encoded bytes at most, hashes and framing included. */
export function estimateEntryBytes(r: PathRecord): number {
  const e = r.entry;
  return (
    96 +
    utf8.encode(e.path).byteLength +
    (e.kind === "file" ? 35 * e.chunks.length : 0) +
    (e.kind === "symlink" ? utf8.encode(e.target).byteLength : 0)
  );
}
