import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CHUNK_AVG, CHUNK_MAX, CHUNK_MIN, chunkLengths, gearTable } from "../../client/content/chunker.ts";
import { chunkFile } from "../../client/content/file-chunks.ts";
import { cleanup, tempDir } from "./support/hosts.ts";
import { pseudoRandom } from "./support/tree.ts";

afterEach(cleanup);

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

/** 8 MiB of xorshift32 bytes, seed 42: the pinned input of the vectors below. */
const VECTOR_INPUT = pseudoRandom(8 * 1024 * 1024, 42);
const VECTOR_LENGTHS = [
  459280, 480803, 333946, 281717, 299336, 547470, 363330, 543678, 99317, 325495, 380947, 305455, 133847, 282270, 98659,
  333180, 378734, 286741, 90033, 289372, 293070, 272958, 289074, 347227, 268152, 118179, 232979, 253359,
];

describe("chunker", () => {
  it("keeps its pinned parameters and gear table", () => {
    expect([CHUNK_MIN, CHUNK_AVG, CHUNK_MAX]).toEqual([65536, 262144, 1048576]);
    const table = Buffer.alloc(256 * 4);
    for (const [i, g] of gearTable().entries()) table.writeUInt32BE(g, i * 4);
    expect(sha(table)).toBe("c93e42657131c6b3946399279a8a3944fe49d4ce5a701c575b115634e9fa87d5");
  });

  it("cuts the pinned vector at the pinned boundaries", () => {
    const lengths = chunkLengths(VECTOR_INPUT);
    expect(lengths).toEqual(VECTOR_LENGTHS);
    expect(sha(VECTOR_INPUT.subarray(0, lengths[0]))).toBe(
      "30156e6a2fca47c030a7574e276e66122aeeb548c1e9c3ead669a4ba205f12f5",
    );
    expect(sha(VECTOR_INPUT.subarray(VECTOR_INPUT.length - (lengths.at(-1) as number)))).toBe(
      "2ab366dd142b1a7db3474e3551dca7ce9a2880bd45ceb63354f6813244466295",
    );
  });

  it("keeps every chunk within min and max, the last excepted from min", () => {
    for (const data of [VECTOR_INPUT, new Uint8Array(3 * CHUNK_MAX + 5)]) {
      const lengths = chunkLengths(data);
      expect(lengths.reduce((a, b) => a + b, 0)).toBe(data.length);
      lengths.forEach((n, i) => {
        expect(n).toBeLessThanOrEqual(CHUNK_MAX);
        if (i < lengths.length - 1) expect(n).toBeGreaterThanOrEqual(CHUNK_MIN);
      });
    }
  });

  it("makes a file no larger than the minimum one chunk, and an empty file none", () => {
    expect(chunkLengths(new Uint8Array(0))).toEqual([]);
    expect(chunkLengths(new Uint8Array(1))).toEqual([1]);
    expect(chunkLengths(pseudoRandom(CHUNK_MIN, 1))).toEqual([CHUNK_MIN]);
  });

  it("changes about one chunk when a byte is inserted at the head", () => {
    const shifted = new Uint8Array(VECTOR_INPUT.length + 1);
    shifted[0] = 0x5a;
    shifted.set(VECTOR_INPUT, 1);
    const hashes = (data: Uint8Array) => {
      let at = 0;
      return chunkLengths(data).map((n) => {
        at += n;
        return sha(data.subarray(at - n, at));
      });
    };
    const before = new Set(hashes(VECTOR_INPUT));
    const after = hashes(shifted);
    const fresh = after.filter((h) => !before.has(h));
    expect(fresh.length).toBe(1);
  });

  it("chunks a file on disk exactly as the same bytes in memory", () => {
    const dir = tempDir("chunk");
    const file = join(dir, "vector.bin");
    writeFileSync(file, VECTOR_INPUT);
    const chunks = chunkFile(file);
    expect(chunks.size).toBe(VECTOR_INPUT.length);
    expect(chunks.sizes).toEqual(VECTOR_LENGTHS);
    expect(hex(chunks.chunks[0] as Uint8Array)).toBe(
      "30156e6a2fca47c030a7574e276e66122aeeb548c1e9c3ead669a4ba205f12f5",
    );
  });
});
