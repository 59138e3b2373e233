/**
 * WebSocket framing. Each binary frame holds one CBOR item. A host sends
 * requests with an id of its choosing; the server answers each with the same
 * id, possibly out of order. The server also sends pokes (no id) when another
 * host's push commits. Request and answer bodies are exactly the HTTP ones.
 */
import type { WireError } from "./errors.ts";
import { ProtocolError } from "./errors.ts";
import { isOpName, type OpName } from "./ops.ts";
import { readMap, readUint } from "./read.ts";

export interface SocketRequest {
  readonly id: number;
  readonly op: OpName;
  /** The operation's request map, undecoded: the op's decoder reads it. */
  readonly body: unknown;
}

export type SocketAnswer =
  | { readonly id: number; readonly body: unknown }
  | { readonly id: number | null; readonly error: WireError };

/**
 * Sent by the server after answers once enough answer bytes are unread as
 * far as it knows: the host replies `{ack: mark}` as soon as it reads it.
 * Frames arrive in order, so the reply proves every answer before the mark
 * left the server; the server stops answering a socket whose unacknowledged
 * answers pass a bound (PROTOCOL.md §8.2), since the runtime buffers what a
 * client does not read.
 */
export interface Mark {
  readonly mark: Uint8Array;
}

/** The host's reply to a mark. */
export interface Ack {
  readonly ack: Uint8Array;
}

/** Bytes of a mark's nonce. */
export const MARK_BYTES = 8;

/** The nonce of an `{ack}` frame, or null when `value` is not one (it is then read as a request). */
export function readAck(value: unknown): Uint8Array | null {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const ack = (value as { ack?: unknown }).ack;
  return ack instanceof Uint8Array && ack.byteLength === MARK_BYTES && !("op" in value) ? ack : null;
}

/** The nonce of a server `{mark}` frame, or null (the host's side of readAck). */
export function readMark(value: unknown): Uint8Array | null {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const mark = (value as { mark?: unknown }).mark;
  return mark instanceof Uint8Array && mark.byteLength === MARK_BYTES ? mark : null;
}

/** Sent by the server after another host's push commits; the host then pulls. */
export interface Poke {
  readonly poke: { readonly rev: number };
}

/**
 * Close codes the server uses. 1008: the socket kept sending frames that could
 * not be read; 1011: the server failed; 4401: the token expired while open.
 */
export const CLOSE_POLICY = 1008;
export const CLOSE_INTERNAL = 1011;
export const CLOSE_TOKEN_EXPIRED = 4401;

/** Consecutive unreadable frames after which the server closes the socket. */
export const MAX_BAD_FRAMES = 16;

/** Reads the envelope of a request frame (its body is decoded by the op). */
export function decodeSocketRequest(value: unknown): SocketRequest {
  const m = readMap(value, "frame");
  const id = readUint(m.id, "id");
  if (!isOpName(m.op)) throw new ProtocolError("bad_request", "op: not an operation", { field: "op", id });
  return { id, op: m.op, body: m.body };
}

/** Best effort: the id of a frame that failed to decode, so its error can be matched. */
export function frameId(value: unknown): number | null {
  if (value === null || typeof value !== "object") return null;
  const id = (value as { id?: unknown }).id;
  return typeof id === "number" && Number.isSafeInteger(id) && id >= 0 ? id : null;
}
