/**
 * The chunker's gear loop (client/content/chunker.ts nextCut), four bytes a
 * turn, against the int32 loop a byte a turn it replaced (kept here). Both
 * cut 64 MiB of random bytes, checked to give the same cuts; CPU ms per MiB,
 * three alternated rounds. BENCHMARKS.md section 16. (Sections 11 and 12
 * measured the int32 loop against the uint32 one, `>>> 0`, before it.)
 *
 *   npx tsx bench/micro/gear-int32.ts
 */
import { randomBytes } from "node:crypto";
import { CHUNK_AVG, CHUNK_MAX, CHUNK_MIN, gearTable, nextCut } from "../../client/content/chunker.ts";

const GEAR = gearTable();
const MASK_SMALL = 0xfffff000 | 0;
const MASK_LARGE = 0xffff0000 | 0;

const GEAR_INT32 = new Int32Array(GEAR.buffer);

/** The int32 loop a byte a turn, as chunker.ts had it before it took four bytes a turn (BENCHMARKS.md section 16). */
function nextCutByteATurn(buf: Uint8Array, start: number, end: number): number {
  const n = end - start;
  if (n <= CHUNK_MIN) return n;
  const limit = Math.min(n, CHUNK_MAX);
  const normal = Math.min(CHUNK_AVG, limit);
  let fp = 0;
  let i = CHUNK_MIN;
  for (; i < normal; i++) {
    fp = ((fp << 1) + (GEAR_INT32[buf[start + i] as number] as number)) | 0;
    if ((fp & MASK_SMALL) === 0) return i + 1;
  }
  for (; i < limit; i++) {
    fp = ((fp << 1) + (GEAR_INT32[buf[start + i] as number] as number)) | 0;
    if ((fp & MASK_LARGE) === 0) return i + 1;
  }
  return limit;
}

const MiB = 1 << 20;
const buf = randomBytes(64 * MiB);
const cuts = (cut: typeof nextCut) => {
  const out: number[] = [];
  for (let at = 0; at < buf.length; ) {
    const len = cut(buf, at, buf.length);
    out.push(len);
    at += len;
  }
  return out;
};
const a = cuts(nextCutByteATurn);
const b = cuts(nextCut);
if (a.length !== b.length || a.some((x, i) => x !== b[i])) throw new Error("four bytes a turn cuts differently");
for (let round = 0; round < 3; round++) {
  for (const [name, cut] of [
    ["int32, a byte a turn (before section 16)", nextCutByteATurn],
    ["chunker.ts (int32, four bytes a turn)", nextCut],
  ] as const) {
    const before = process.cpuUsage();
    cuts(cut);
    const used = process.cpuUsage(before);
    console.log(`${name}: ${((used.user + used.system) / 1000 / 64).toFixed(3)} ms of CPU per MiB`);
  }
}
