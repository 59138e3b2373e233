/**
 * One path's state as it is on disk now (the scanner's compare and
 * readState): a directory's mode and mtime, a symlink's target, a file's
 * chunks read a block at a time and checked not to have moved while read.
 */
import { type BigIntStats, lstatSync, readlinkSync } from "node:fs";
import { type Entry, symlinkTargetProblem } from "../../protocol/entry.ts";
import { toHex } from "../../protocol/hash.ts";
import { type ChunkSink, chunkFileSteps } from "../content/file-chunks.ts";
import type { PathRecord } from "../store/store.ts";
import { diskKind, isRacy, mtimeMs, permBits, statKey } from "./stat-key.ts";

/** A path's state as read from disk. */
export interface ScannedState {
  readonly entry: Entry;
  readonly sizes: readonly number[];
  readonly stat: string | null;
  /** The file changed under every read: what was read may be a moment of a write, not a version (scanner.ts). */
  readonly changedWhileRead?: true;
}

/** What the reads have hashed so far (the scan's result counts them). */
export interface HashCounters {
  hashedFiles: number;
  hashedBytes: number;
}

export interface ReadOptions {
  /** Sees the bytes of every chunk the scan hashes (new and changed files). */
  readonly onChunk?: ChunkSink;
  /** Bytes of one file hashed so far, after each chunk: progress within a large file (sync.ts). */
  readonly onFileBytes?: (path: string, done: number, size: number) => void;
}

/**
 * The state of `rel` (at `abs`, lstat'ed as `st`), a file read a block at a
 * time (chunkFileSteps); null for what is not synced (a socket, a device).
 * `previous` is the store's record, whose chunks a reread file does not hand
 * on. Throws when a symlink's target is one no server takes.
 */
export function* readStateSteps(
  abs: string,
  rel: string,
  st: BigIntStats,
  counters: HashCounters,
  options: ReadOptions,
  previous?: PathRecord,
): Generator<false, ScannedState | null, void> {
  switch (diskKind(st)) {
    case "dir":
      return {
        entry: { kind: "dir", path: rel, mode: permBits(st), mtime: mtimeMs(st) },
        sizes: [],
        stat: statKey(st),
      };
    case "symlink": {
      const target = readlinkSync(abs);
      const problem = symlinkTargetProblem(target);
      // The scanner reports it as skipped and keeps what the store knew.
      if (problem !== null) throw new Error(`symlink ${problem}`);
      return { entry: { kind: "symlink", path: rel, target }, sizes: [], stat: statKey(st) };
    }
    case "file":
      return yield* readFileSteps(abs, rel, st, counters, options, previous);
    default:
      return null;
  }
}

/**
 * Reads a file, then checks it did not move while read (its fingerprint
 * and size); read again when it did, at most three times. A file that
 * kept changing comes back marked `changedWhileRead`.
 */
function* readFileSteps(
  abs: string,
  rel: string,
  st: BigIntStats,
  counters: HashCounters,
  { onChunk, onFileBytes }: ReadOptions,
  previous?: PathRecord,
): Generator<false, ScannedState, void> {
  let before = st;
  // A file read again with its recorded chunks (racily clean last time, or only touched)
  // hands on only chunks it did not have: the rest are the push's to probe, not a rescan's.
  const had = onChunk && previous?.entry.kind === "file" ? new Set(previous.entry.chunks.map(toHex)) : null;
  const fresh: ChunkSink | undefined =
    onChunk && had
      ? (hash, bytes) => {
          if (!had.has(toHex(hash))) onChunk(hash, bytes);
        }
      : onChunk;
  for (let attempt = 0; ; attempt++) {
    let done = 0;
    const size = Number(before.size);
    const sink: ChunkSink | undefined =
      fresh || onFileBytes
        ? (hash, bytes) => {
            fresh?.(hash, bytes);
            done += bytes.byteLength;
            onFileBytes?.(rel, done, size);
          }
        : undefined;
    const chunks = yield* chunkFileSteps(abs, sink);
    counters.hashedFiles++;
    counters.hashedBytes += chunks.size;
    const after = lstatSync(abs, { bigint: true });
    const stable = statKey(after) === statKey(before) && BigInt(chunks.size) === after.size;
    if (stable || attempt >= 2) {
      const trusted = stable && !isRacy(after, Date.now());
      return {
        entry: {
          kind: "file",
          path: rel,
          mode: permBits(after),
          mtime: mtimeMs(after),
          size: chunks.size,
          chunks: chunks.chunks,
        },
        sizes: chunks.sizes,
        stat: trusted ? statKey(after) : null,
        ...(stable ? {} : { changedWhileRead: true as const }),
      };
    }
    before = after;
  }
}
