/**
 * One buffer every answer frame a socket sends is joined into (issue 28).
 * `ws.send` copies what it is given into the runtime's send queue, so the
 * frame's own buffer is garbage as soon as it returns: a fresh 8 MiB buffer
 * per objects/get answer, beside the object bytes it was joined from, was
 * ~8 MiB more that the process held until V8 next collected, for every
 * answer sent. Joined here, a frame costs no allocation once the buffer has
 * grown to the largest answer (maxGetBytes and its framing).
 *
 * The buffer is shared by every object of the isolate: what `joinFrame`
 * returns must be sent before anything else is joined, in the same
 * synchronous run (socket.ts sends it at once).
 */
import { concatBytes } from "../../protocol/cbor-parts.ts";
import { LIMITS } from "../../protocol/limits.ts";

/** The largest frame joined into the shared buffer (16 MiB); a larger one (none is, today) gets its own. */
const MAX_SHARED_BYTES = 4 * LIMITS.maxGetBytes;

let shared = new Uint8Array(0);

/** The frame's parts in one buffer, valid until the next call: send it at once. */
export function joinFrame(frame: { readonly parts: readonly Uint8Array[]; readonly byteLength: number }): Uint8Array {
  if (frame.parts.length === 1) return frame.parts[0] as Uint8Array;
  if (frame.byteLength > MAX_SHARED_BYTES) return concatBytes(frame.parts);
  if (shared.byteLength < frame.byteLength) {
    // Grown in whole MiB, so answers of slightly different sizes do not each replace it.
    shared = new Uint8Array(Math.ceil(frame.byteLength / 2 ** 20) * 2 ** 20);
  }
  let at = 0;
  for (const part of frame.parts) {
    shared.set(part, at);
    at += part.byteLength;
  }
  return shared.subarray(0, frame.byteLength);
}
