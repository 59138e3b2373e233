/**
 * Content-defined chunking (FastCDC with normalized chunking, level 2) with
 * pinned parameters. Boundaries depend only on content, so inserting a byte
 * near the head of a large file changes about one chunk, not the file. The
 * parameters and the gear table are part of the host's wire behaviour: other
 * hosts dedupe against the chunks we send, so changing either re-sends every
 * large file. Test vectors in test/node/chunker.test.ts pin them.
 */
import { createHash } from "node:crypto";

export const CHUNK_MIN = 64 * 1024;
export const CHUNK_AVG = 256 * 1024;
export const CHUNK_MAX = 1024 * 1024;

/**
 * The hash is a 32-bit gear hash shifted left one bit a byte, so bit k
 * depends on the last k + 1 bytes: the masks use the top bits to see the
 * widest window. 2^18 = CHUNK_AVG; below the average point the mask has two
 * more bits (cuts are rarer), past it two fewer (cuts are likelier).
 */
const MASK_SMALL = 0xfffff000 | 0; // top 20 bits
const MASK_LARGE = 0xffff0000 | 0; // top 16 bits

/**
 * gear[i] = the first 4 bytes (big-endian) of SHA-256("ferry-gear-" + i).
 * Made on the first cut, not when the module loads: its 256 hashes load
 * node:crypto, which a command that reads no file (a no-op sync) never needs
 * (~10 ms of CPU, BENCHMARKS.md section 14).
 */
export function gearTable(): Uint32Array {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) table[i] = createHash("sha256").update(`ferry-gear-${i}`).digest().readUInt32BE(0);
  return table;
}

/**
 * The gear table's bits as int32, for nextCut: its loop in int32 arithmetic
 * (`| 0`) makes the same cuts as in uint32 (`>>> 0`: only the low 32 bits and
 * the masked top bits are compared) and ran 10-25% faster bundled
 * (bench/micro/gear-int32.ts).
 */
let gearInt32: Int32Array | null = null;

/**
 * The length of the chunk that starts at `start` in `buf[start, end)`. Unless
 * `end` is the end of the file, the caller gives at least CHUNK_MAX bytes, so
 * a cut never depends on how the file was read.
 */
export function nextCut(buf: Uint8Array, start: number, end: number): number {
  const n = end - start;
  if (n <= CHUNK_MIN) return n;
  const limit = Math.min(n, CHUNK_MAX);
  const normal = Math.min(CHUNK_AVG, limit);
  gearInt32 ??= new Int32Array(gearTable().buffer);
  const bytes = buf.subarray(start, start + limit);
  const cut = roll(bytes, CHUNK_MIN, normal, 0, MASK_SMALL);
  if (cut > 0) return cut;
  const late = roll(bytes, normal, limit, rolled, MASK_LARGE);
  return late > 0 ? late : limit;
}

/** The fingerprint `roll` ended with when it found no cut. */
let rolled = 0;

/**
 * Rolls the gear hash over `bytes[from, to)` from fingerprint `fp`: the
 * chunk's length where `fp & mask` is first 0, else 0 (and `rolled` set).
 * Four bytes a turn, each one checked: the same cuts as a byte a turn, and
 * 20-25% less CPU (bench/micro/gear-int32.ts), the loop being most of a
 * large file's chunking.
 */
function roll(bytes: Uint8Array, from: number, to: number, fp: number, mask: number): number {
  const gear = gearInt32 as Int32Array;
  let i = from;
  for (; i + 4 <= to; i += 4) {
    fp = ((fp << 1) + (gear[bytes[i] as number] as number)) | 0;
    if ((fp & mask) === 0) return i + 1;
    fp = ((fp << 1) + (gear[bytes[i + 1] as number] as number)) | 0;
    if ((fp & mask) === 0) return i + 2;
    fp = ((fp << 1) + (gear[bytes[i + 2] as number] as number)) | 0;
    if ((fp & mask) === 0) return i + 3;
    fp = ((fp << 1) + (gear[bytes[i + 3] as number] as number)) | 0;
    if ((fp & mask) === 0) return i + 4;
  }
  for (; i < to; i++) {
    fp = ((fp << 1) + (gear[bytes[i] as number] as number)) | 0;
    if ((fp & mask) === 0) return i + 1;
  }
  rolled = fp;
  return 0;
}

/** Chunk lengths of an in-memory buffer, in order. An empty buffer has no chunks. */
export function chunkLengths(buf: Uint8Array): number[] {
  const out: number[] = [];
  for (let at = 0; at < buf.length; ) {
    const len = nextCut(buf, at, buf.length);
    out.push(len);
    at += len;
  }
  return out;
}
