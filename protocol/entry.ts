import type { CborParts } from "./cbor-parts.ts";
import { ProtocolError } from "./errors.ts";
import type { HashList } from "./hash.ts";
import { MAX_SYMLINK_TARGET_BYTES } from "./limits.ts";
import { isFaithfulText } from "./paths.ts";
import { type Fields, readArray, readHash, readInt, readPath, readText, readUint } from "./read.ts";

/** A chunk's SHA-256: 32 bytes, never hex, on the wire and in the API. */
export type Hash = Uint8Array;

/**
 * The state of one path, as it travels on the wire and as both sides store it.
 * The wire is state-based: an entry says what a path *is*, never how it got
 * there (no rename or move opcodes).
 */
export type Entry = FileEntry | DirEntry | SymlinkEntry | GoneEntry;

export interface FileEntry {
  readonly kind: "file";
  readonly path: string;
  /** Permission bits only (0..0o7777); the kind carries the type. */
  readonly mode: number;
  /** Modification time, integer milliseconds since the Unix epoch. */
  readonly mtime: number;
  readonly size: number;
  /** The file's bytes are the concatenation of these chunks, in order. */
  readonly chunks: readonly Hash[];
}

export interface DirEntry {
  readonly kind: "dir";
  readonly path: string;
  readonly mode: number;
  readonly mtime: number;
}

export interface SymlinkEntry {
  readonly kind: "symlink";
  readonly path: string;
  /** Stored verbatim; never resolved by the server. */
  readonly target: string;
}

/** A tombstone: the path no longer exists. */
export interface GoneEntry {
  readonly kind: "gone";
  readonly path: string;
}

export type EntryKind = Entry["kind"];
/** Chunks one file may list: 1 TiB of 1 MiB chunks would be far past any body limit anyway. */
export const MAX_CHUNKS_PER_FILE = 1 << 20;

/**
 * An entry whose file chunk list has the form `C`: `readonly Hash[]` in
 * answers (Entry), one hash list in a push (protocol/push.ts, PushEntry).
 */
export type EntryWith<C> = (Omit<FileEntry, "chunks"> & { readonly chunks: C }) | DirEntry | SymlinkEntry | GoneEntry;

/** Reads the entry fields of a map whose other fields (base, rev) the caller reads; a file's chunks are an array. */
export function readEntry(m: Fields, field: string): Entry {
  return readEntryWith(m, field, (v, f) =>
    readArray(v, f, MAX_CHUNKS_PER_FILE).map((h, i) => readHash(h, `${f}[${i}]`)),
  );
}

/** readEntry with the reader of a file's `chunks` (push reads one hash list, protocol/push.ts). */
export function readEntryWith<C>(
  m: Fields,
  field: string,
  readChunks: (value: unknown, field: string) => C,
): EntryWith<C> {
  const path = readPath(m.path, `${field}.path`);
  const kind = readText(m.kind, `${field}.kind`);
  switch (kind) {
    case "file":
      return {
        kind,
        path,
        mode: readMode(m.mode, `${field}.mode`),
        mtime: readInt(m.mtime, `${field}.mtime`),
        size: readUint(m.size, `${field}.size`),
        chunks: readChunks(m.chunks, `${field}.chunks`),
      };
    case "dir":
      return { kind, path, mode: readMode(m.mode, `${field}.mode`), mtime: readInt(m.mtime, `${field}.mtime`) };
    case "symlink":
      // The target rule is push's (assertStorableTarget): a change an older server stored is still read.
      return { kind, path, target: readText(m.target, `${field}.target`) };
    case "gone":
      return { kind, path };
    default:
      throw new ProtocolError("bad_request", `${field}.kind: expected file, dir, symlink or gone`, {
        field: `${field}.kind`,
      });
  }
}

/**
 * Why a symlink target cannot be stored, or null: 1 to 4095 bytes (what
 * Linux can create), no NUL, and faithful UTF-8 (paths.ts). The server
 * refuses such an entry (`bad_request`), the scanner skips such a link, and
 * the applier refuses one that a server stored before the rule.
 */
export function symlinkTargetProblem(target: string): string | null {
  if (target.length === 0) return "target is empty";
  if (!isFaithfulText(target)) return "target is not valid UTF-8";
  if (target.includes("\0")) return "target contains NUL";
  if (target.length > MAX_SYMLINK_TARGET_BYTES / 3 && utf8.encode(target).byteLength > MAX_SYMLINK_TARGET_BYTES) {
    return `target is longer than ${MAX_SYMLINK_TARGET_BYTES} bytes`;
  }
  return null;
}

/**
 * Push's rule 0 for a symlink's target (PROTOCOL.md §4.5): throws
 * `bad_request` naming the field. Only requests are held to it: answers
 * (changes, snapshot) may carry a target an older server stored, and a
 * host refuses that one path rather than the whole page.
 */
export function assertStorableTarget(target: string, field: string): void {
  const problem = symlinkTargetProblem(target);
  if (problem !== null) throw new ProtocolError("bad_request", `${field}: ${problem}`, { field });
}

const utf8 = new TextEncoder();

function readMode(value: unknown, field: string): number {
  const mode = readUint(value, field);
  if (mode > 0o7777)
    throw new ProtocolError("bad_request", `${field}: permission bits only (at most 0o7777)`, { field });
  return mode;
}

/**
 * The keys each kind's entry has on the wire, in the order they are written:
 * the one list both the map form (entryFields) and the writer (writeEntry)
 * read, so neither counts keys by hand.
 */
export const ENTRY_KEYS = {
  file: ["path", "kind", "mode", "mtime", "size", "chunks"],
  dir: ["path", "kind", "mode", "mtime"],
  symlink: ["path", "kind", "target"],
  gone: ["path", "kind"],
} as const satisfies { readonly [K in EntryKind]: readonly (keyof Extract<Entry, { kind: K }>)[] };

/** One key's value: every key ENTRY_KEYS names is a field of that kind (its `satisfies` checks it). */
function entryValue(
  e: EntryWith<readonly Hash[] | HashList>,
  key: string,
): string | number | readonly Hash[] | HashList {
  const value: unknown = Reflect.get(e, key);
  return value as string | number | readonly Hash[] | HashList;
}

/** The wire map of an entry: only the fields its kind has (a `Change`'s rev or a record's extras stay off). */
export function entryFields(e: EntryWith<readonly Hash[] | HashList>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const key of ENTRY_KEYS[e.kind]) fields[key] = entryValue(e, key);
  return fields;
}

/**
 * Writes an entry as encodeCbor(entryFields) would, with `extra` more keys
 * the caller writes after it (push's `base`): no map built per entry, which
 * cost ~10 µs an entry in a pack of 10,000 (push.ts). A file's chunks go as
 * they are held: an array of hashes, or one hash list (push's form).
 */
export function writeEntry(w: CborParts, e: EntryWith<readonly Hash[] | HashList>, extra: number): CborParts {
  const keys = ENTRY_KEYS[e.kind];
  w.map(keys.length + extra);
  for (const key of keys) {
    const value = entryValue(e, key);
    w.text(key);
    if (typeof value === "string") w.text(value);
    else if (typeof value === "number") w.int(value);
    else if (value instanceof Uint8Array) w.bytes(value);
    else {
      w.array(value.length); // a file's chunks
      for (const h of value) w.bytes(h);
    }
  }
  return w;
}
