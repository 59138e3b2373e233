import { describe, expect, it } from "vitest";
import { sha256, toHex } from "../../protocol/hash.ts";
import { packHeaderBytes, readPackCount, readPackHeader, writePack } from "../../worker/r2/pack-format.ts";

async function chunk(text: string) {
  const bytes = new TextEncoder().encode(text);
  return { hash: await sha256(bytes), bytes };
}

describe("pack format", () => {
  it("lists each chunk's hash and length in its header, then the bytes in that order", async () => {
    const chunks = [await chunk("alpha"), await chunk(""), await chunk("gamma gamma")];
    const { bytes, members } = writePack(chunks);
    expect(bytes.byteLength).toBe(packHeaderBytes(3) + 5 + 0 + 11);
    expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe("FRPK");
    expect(readPackCount(bytes)).toBe(3);
    const read = readPackHeader(bytes, bytes.byteLength);
    expect(read).toEqual(members);
    for (const [i, m] of (read ?? []).entries()) {
      expect(toHex(m.hash)).toBe(toHex(chunks[i]?.hash as Uint8Array));
      expect(toHex(bytes.subarray(m.offset, m.offset + m.size))).toBe(toHex(chunks[i]?.bytes as Uint8Array));
    }
  });

  it("reads an empty pack as no members", () => {
    const { bytes } = writePack([]);
    expect(bytes.byteLength).toBe(packHeaderBytes(0));
    expect(readPackHeader(bytes, bytes.byteLength)).toEqual([]);
  });

  it("refuses what is no pack: another magic, another version, a header cut short, lengths past the object", async () => {
    const { bytes } = writePack([await chunk("alpha")]);
    const other = bytes.slice();
    other[0] = 0x47;
    expect(readPackHeader(other, other.byteLength)).toBeNull();
    const newer = bytes.slice();
    newer[7] = 2;
    expect(readPackCount(newer)).toBeNull();
    expect(readPackHeader(bytes.subarray(0, packHeaderBytes(1) - 1), bytes.byteLength)).toBeNull();
    expect(readPackHeader(bytes, bytes.byteLength - 1)).toBeNull();
    expect(readPackCount(bytes.subarray(0, 11))).toBeNull();
  });
});
