/**
 * Reading files as chunks: the chunk list of a file on disk (for the scanner)
 * and the bytes of given chunks (for uploads). Synchronous reads: the scanner
 * and the uploader call these between network round trips, and sync reads
 * skip the thread-pool hop that dominates for small files.
 */
import { closeSync, openSync, readSync } from "node:fs";
import { runSteps } from "../common/steps.ts";
import { CHUNK_MAX, nextCut } from "./chunker.ts";
import { sha256Sync } from "./hash.ts";

export interface FileChunks {
  readonly size: number;
  readonly chunks: readonly Uint8Array[];
  readonly sizes: readonly number[];
}

const READ_BLOCK = 4 * CHUNK_MAX;
/** The most chunk bytes one step of chunkFileSteps hands to its sink: a block and what the last one left. */
export const STEP_CHUNK_BYTES = READ_BLOCK + CHUNK_MAX;

// A read buffer kept between files; a file being chunked holds it, so a
// second chunking while one is paused (chunkFileSteps) takes a buffer of its own.
let spare: Buffer | undefined;

/**
 * Sees each chunk's bytes as they are hashed. The bytes are a view of a
 * buffer reused for the next read: copy what must outlive the call.
 */
export type ChunkSink = (hash: Uint8Array, bytes: Uint8Array) => void;

/** Chunks and hashes a file by reading it once, in blocks of a few MiB. */
export function chunkFile(absPath: string, onChunk?: ChunkSink): FileChunks {
  return runSteps(chunkFileSteps(absPath, onChunk));
}

/**
 * chunkFile a block at a time: it yields after each block of a file larger
 * than one, so that a pausing scan (Scanner.scanPausing) gives way within a
 * large file. A first push's early upload needs it: while a 140 MiB binary
 * was chunked in one synchronous call, the request bodies in flight could
 * not be written and the object waited, and the chunks past the uploader's
 * bound were left to the push, which read and hashed them again (issue 13).
 * The file stays open while paused, so its bytes are one file's even if
 * the path is replaced meanwhile: a caller that stops early must `return()`
 * the generator to close it.
 */
export function* chunkFileSteps(absPath: string, onChunk?: ChunkSink): Generator<false, FileChunks, void> {
  const fd = openSync(absPath, "r");
  const buf: Buffer = spare ?? Buffer.allocUnsafe(STEP_CHUNK_BYTES);
  spare = undefined;
  try {
    const chunks: Uint8Array[] = [];
    const sizes: number[] = [];
    let filled = 0;
    let eof = false;
    let size = 0;
    for (;;) {
      while (!eof && filled < buf.length) {
        const n = readSync(fd, buf, filled, buf.length - filled, null);
        if (n === 0) eof = true;
        filled += n;
      }
      let at = 0;
      // Cut while a full CHUNK_MAX window is available, or everything at EOF.
      while (at < filled && (eof || filled - at >= CHUNK_MAX)) {
        const len = nextCut(buf, at, filled);
        const bytes = buf.subarray(at, at + len);
        const hash = sha256Sync(bytes);
        chunks.push(hash);
        onChunk?.(hash, bytes);
        sizes.push(len);
        at += len;
      }
      size += at;
      // Copies at their length: a pushed-to array keeps room for 16 more, ~300 bytes a file for as long as
      // a first push holds its scan (issue 13).
      if (eof && at >= filled) return { size, chunks: chunks.slice(), sizes: sizes.slice() };
      buf.copy(buf, 0, at, filled);
      filled -= at;
      yield false;
    }
  } finally {
    closeSync(fd);
    spare = buf;
  }
}

/** Reads `length` bytes at `offset`; fewer when the file is shorter now. */
export function readRange(absPath: string, offset: number, length: number): Uint8Array {
  const fd = openSync(absPath, "r");
  try {
    const buf = Buffer.allocUnsafe(length);
    let got = 0;
    while (got < length) {
      const n = readSync(fd, buf, got, length - got, offset + got);
      if (n === 0) break;
      got += n;
    }
    return got === length ? buf : buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}
