/**
 * A push body naming one file of 60,000 one-byte chunks the server does not
 * hold: refused after it is decoded (`missing_objects`, none stored), and as
 * wide as a file may be (maxFileChunks). Its chunks are one hash list, as a
 * push carries them (protocol version 4); `asArray` sends them as version 3
 * did, one byte string each, which the server decodes into 60,000 small
 * objects before it refuses the form. The memory tests and
 * bench:hostile-memory send both again and again.
 */
import { encodeCbor } from "../../../protocol/cbor.ts";
import { joinHashes } from "../../../protocol/hash.ts";

export function widePush(asArray = false): Uint8Array {
  const chunks = Array.from({ length: 60_000 }, (_, i) => {
    const h = new Uint8Array(32);
    new DataView(h.buffer).setUint32(0, i);
    return h;
  });
  return encodeCbor({
    hostId: new Uint8Array(16).fill(9),
    start: { rev: 0, path: null },
    end: { rev: 1, path: null },
    entries: [
      {
        path: "wide.bin",
        kind: "file",
        mode: 0o644,
        mtime: 0,
        size: 60_000,
        chunks: asArray ? chunks : joinHashes(chunks),
      },
    ],
  });
}
