/**
 * Comparing entry states. Two states are the same when kind, permission bits,
 * content (chunk hashes) and symlink target agree; mtime is not part of the
 * state's identity (a touched file is not a change worth a push), nor is a
 * directory's mtime, which moves whenever a child does.
 */
import type { Entry } from "../protocol/entry.ts";
import { hashesEqual } from "../protocol/hash.ts";
import { sha256Sync } from "./hash.ts";

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
      return (
        a.mode === f.mode &&
        a.size === f.size &&
        a.chunks.length === f.chunks.length &&
        a.chunks.every((h, i) => hashesEqual(h, f.chunks[i] as Uint8Array))
      );
    }
    case "dir":
      return a.mode === (b as typeof a).mode;
    case "symlink":
      return a.target === (b as typeof a).target;
    case "gone":
      return true;
  }
}

export function signatureMatches(e: Entry, signature: Uint8Array | null): boolean {
  return signature !== null && hashesEqual(entrySignature(e), signature);
}
