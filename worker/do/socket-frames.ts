/**
 * A socket frame read once (socket.ts): what it holds in the object, found
 * before it is decoded, then its request envelope, or why it cannot be read.
 */
import { decodeCbor } from "../../protocol/cbor.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { frameId, type HostFrame, isAckFrame, peekFrameId, readHostFrame } from "../../protocol/ws.ts";
import { decodedWeight } from "./inflight.ts";

/** A frame that could not be read as a request: answered with this error, under `id` when it was found. */
export interface UnreadableFrame {
  readonly id: number | null;
  readonly error: ProtocolError;
}

/**
 * What a frame holds in the object, its bytes and what decoding them will
 * hold (0 for an ack), or why it cannot be read: found before it is decoded.
 */
export function chargeOf(data: string | ArrayBuffer): { frame: Uint8Array; bytes: number } | UnreadableFrame {
  if (typeof data === "string") {
    return {
      id: null,
      error: new ProtocolError("bad_request", "text frame: send CBOR in binary frames", { field: "frame" }),
    };
  }
  const frame = new Uint8Array(data);
  if (data.byteLength > LIMITS.maxBodyBytes) {
    const message = `frame of ${data.byteLength} bytes is over maxBodyBytes (${LIMITS.maxBodyBytes})`;
    return {
      id: peekFrameId(frame),
      error: new ProtocolError("payload_too_large", message, { limit: LIMITS.maxBodyBytes, field: "frame" }),
    };
  }
  if (isAckFrame(frame)) return { frame, bytes: 0 };
  const weight = decodedWeight(frame);
  if (weight instanceof ProtocolError) return { id: peekFrameId(frame), error: weight };
  return { frame, bytes: frame.byteLength + weight };
}

/** The frame as a request envelope, or why it cannot be one. The body is read by the op's decoder. */
export function readFrame(data: Uint8Array): HostFrame | UnreadableFrame {
  let value: unknown;
  try {
    value = decodeCbor(data);
  } catch (e) {
    if (e instanceof ProtocolError) return { id: null, error: e };
    throw e;
  }
  try {
    return readHostFrame(value);
  } catch (e) {
    if (e instanceof ProtocolError) return { id: frameId(value), error: e };
    throw e;
  }
}
