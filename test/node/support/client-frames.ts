/**
 * WebSocket frames as a client sends them (RFC 6455 §5.2), by hand, for the
 * tests of what the front door follows (front-door, inbound, serve-memory):
 * masked with a key of zeros, so the payload's bytes stay as they are.
 */

/** The header of a masked frame of `length` bytes, its length in the shortest form; binary and final by default. */
export function maskedHeader(length: number, first = 0x82): Buffer {
  const head =
    length < 126
      ? Buffer.from([first, 0x80 | length])
      : length < 65536
        ? Buffer.from([first, 0x80 | 126, length >> 8, length & 0xff])
        : Buffer.from([first, 0x80 | 127, 0, 0, 0, 0, 0, 0, 0, 0]);
  if (length >= 65536) head.writeBigUInt64BE(BigInt(length), 2);
  return Buffer.concat([head, Buffer.alloc(4)]);
}

/** A whole masked frame of `payload`. */
export function maskedFrame(payload: Uint8Array, first = 0x82): Buffer {
  return Buffer.concat([maskedHeader(payload.length, first), payload]);
}
