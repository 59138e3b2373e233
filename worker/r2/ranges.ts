/**
 * Reads of one pack object merged (downloads, worker/r2/bucket-store.ts):
 * ranges that touch or lie within MERGE_GAP_BYTES of each other become one
 * R2 range read, so a restore asking a pack's chunks in order reads the
 * pack in a few reads, not one per chunk. Pure.
 */
import type { ByteRange } from "../sync/pack-store.ts";

/** Bytes between two ranges read over rather than paying a second request for. */
export const MERGE_GAP_BYTES = 64 * 1024;

/** One read: its span, and which of the asked ranges it serves. */
export interface MergedRead extends ByteRange {
  readonly members: readonly number[];
}

/** The asked ranges (by index) grouped into reads, each read's members sorted by offset. */
export function mergeRanges(ranges: readonly ByteRange[], gap = MERGE_GAP_BYTES): MergedRead[] {
  const order = ranges
    .map((_, i) => i)
    .sort((a, b) => (ranges[a] as ByteRange).offset - (ranges[b] as ByteRange).offset);
  const reads: { offset: number; end: number; members: number[] }[] = [];
  for (const i of order) {
    const r = ranges[i] as ByteRange;
    const last = reads.at(-1);
    if (last !== undefined && r.offset <= last.end + gap) {
      last.end = Math.max(last.end, r.offset + r.size);
      last.members.push(i);
    } else reads.push({ offset: r.offset, end: r.offset + r.size, members: [i] });
  }
  return reads.map((r) => ({ offset: r.offset, size: r.end - r.offset, members: r.members }));
}
