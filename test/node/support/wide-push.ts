/**
 * A push body naming one file of 60,000 one-byte chunks the server does not
 * hold: refused after it is decoded (`missing_objects`, none stored), and as
 * wide as a file may be (maxFileChunks). Decoded, it is 60,000 small objects:
 * the memory tests and bench:hostile-memory send it again and again.
 */
import { encodeCbor } from "../../../protocol/cbor.ts";

export function widePush(): Uint8Array {
  const chunks = Array.from({ length: 60_000 }, (_, i) => {
    const h = new Uint8Array(32);
    new DataView(h.buffer).setUint32(0, i);
    return h;
  });
  return encodeCbor({
    hostId: new Uint8Array(16).fill(9),
    start: { rev: 0, path: null },
    end: { rev: 1, path: null },
    entries: [{ path: "wide.bin", kind: "file", mode: 0o644, mtime: 0, size: 60_000, chunks }],
  });
}
