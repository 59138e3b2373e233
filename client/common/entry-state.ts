/**
 * Comparing entry states. Two states are the same when kind, permission bits,
 * content (chunk hashes), a file's mtime and a symlink's target agree: an
 * mtime-only change syncs like a mode-only change, entry only (mtimes now
 * round-trip to the millisecond). A directory's mtime is not part of its
 * state: it moves whenever a child does.
 *
 * The signature kept as "last agreed" leaves mtime out: it names content and
 * mode, so a push can tell an mtime-only change (the server holds its
 * chunks) and a pull does not fetch bytes for one.
 */
import type { Entry } from "../../protocol/entry.ts";
import { hashesEqual } from "../../protocol/hash.ts";
import { sha256Sync } from "../content/hash.ts";

const SIGNATURE_BYTES = 16;
const utf8 = new TextEncoder();

/** A short digest of an entry's state: what the store keeps as "last agreed". */
export function entrySignature(e: Entry): Uint8Array {
  const head = utf8.encode(
    e.kind === "file" || e.kind === "dir"
      ? `${e.kind}:${e.mode}:`
      : e.kind === "symlink"
        ? `symlink:${e.target}`
        : "gone",
  );
  const parts = e.kind === "file" ? [head, ...e.chunks] : [head];
  return sha256Sync(...parts).subarray(0, SIGNATURE_BYTES);
}

export function sameState(a: Entry, b: Entry): boolean {
  if (a.kind !== b.kind) return false;
  switch (a.kind) {
    case "file": {
      const f = b as typeof a;
      return a.mode === f.mode && a.mtime === f.mtime && sameContent(a, f);
    }
    case "dir":
      return a.mode === (b as typeof a).mode;
    case "symlink":
      return a.target === (b as typeof a).target;
    case "gone":
      return true;
  }
}

/** True when two files hold the same bytes (mode and mtime aside). */
export function sameContent(a: Entry, b: Entry): boolean {
  if (a.kind !== "file" || b.kind !== "file") return false;
  return (
    a.size === b.size &&
    a.chunks.length === b.chunks.length &&
    a.chunks.every((h, i) => hashesEqual(h, b.chunks[i] as Uint8Array))
  );
}

export function signatureMatches(e: Entry, signature: Uint8Array | null): boolean {
  return signature !== null && hashesEqual(entrySignature(e), signature);
}
