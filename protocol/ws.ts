/**
 * WebSocket framing. Each binary frame holds one CBOR item. A host sends
 * requests with an id of its choosing; the server answers each with the same
 * id, possibly out of order. The server also sends pokes (no id) when another
 * host's push commits. Request and answer bodies are exactly the HTTP ones.
 */
import { encodeCbor } from "./cbor.ts";
import { CborParts, concatBytes } from "./cbor-parts.ts";
import { CborHeads, weighItem } from "./cbor-weight.ts";
import { decodeWireError, ProtocolError } from "./errors.ts";
import { isOpName, OPS, type OpName, type OpRequest, type OpResponse } from "./ops.ts";
import { readMap, readUint } from "./read.ts";

export interface SocketRequest {
  readonly id: number;
  readonly op: OpName;
  /** The operation's request map, undecoded: the op's decoder reads it. */
  readonly body: unknown;
}

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

/** Sent by the server after another host's push commits; the host then pulls. */
export interface Poke {
  readonly poke: { readonly rev: number };
}

/**
 * A request frame `{id, op, body}` (§8.1), the body written as over HTTP
 * (ops.ts writeRequest), the frame to its exact size: encoding an upload or
 * a push whole grew a buffer up to four times the frame's size and copied
 * into it as it grew.
 */
export function encodeRequestFrame<K extends OpName>(id: number, op: K, req: OpRequest<K>): Uint8Array {
  const head = new CborParts().map(3).text("id").uint(id).text("op").text(op).text("body");
  return OPS[op].writeRequest(head, req).toBytes();
}

/**
 * An answer frame `{id, body}` in one buffer of its exact size (see
 * answerFrameParts). encodeCbor of the whole frame grew its buffer to up to
 * four times an objects/get answer (8 MiB then), 16 to 32 MiB allocated per answer
 * and kept until V8 collected it (issue 28: twelve sockets that never read
 * held ~110 MiB with 32 MiB counted).
 */
export function encodeAnswerFrame<K extends OpName>(id: number, op: K, response: OpResponse<K>): Uint8Array {
  return concatBytes(answerFrameParts(id, op, response).parts);
}

/**
 * An answer frame `{id, body}` as buffers: `body` is the op's answer, as
 * its HTTP body is, written by the op's writeResponse where it has one (an
 * objects/get answer's object bytes stay where they were read), else by its
 * encodeResponse. The server joins them into a buffer it reuses for every
 * frame (worker/do/frame-buffer.ts).
 */
export function answerFrameParts<K extends OpName>(
  id: number,
  op: K,
  response: OpResponse<K>,
): { readonly parts: Uint8Array[]; readonly byteLength: number } {
  const w = new CborParts().map(2).text("id").uint(id).text("body");
  const write = OPS[op].writeResponse as ((w: CborParts, res: OpResponse<K>) => CborParts) | undefined;
  return (write ? write(w, response) : w.raw(OPS[op].encodeResponse(response))).finish();
}

/** An error frame `{id, error}`; `id` is null when the frame it answers had none that could be read. */
export function encodeErrorFrame(id: number | null, error: ProtocolError): Uint8Array {
  return encodeCbor({ id, ...error.toWire() });
}

export function encodePoke(rev: number): Uint8Array {
  const poke: Poke = { poke: { rev } };
  return encodeCbor(poke);
}

export function encodeMark(nonce: Uint8Array): Uint8Array {
  const mark: Mark = { mark: nonce };
  return encodeCbor(mark);
}

export function encodeAck(nonce: Uint8Array): Uint8Array {
  const ack: Ack = { ack: nonce };
  return encodeCbor(ack);
}

/** A frame the server sends, as the host reads it. */
export type ServerFrame =
  | { readonly kind: "answer"; readonly id: number; readonly body: unknown }
  | { readonly kind: "error"; readonly id: number | null; readonly error: ProtocolError }
  | { readonly kind: "poke"; readonly rev: number }
  | { readonly kind: "mark"; readonly nonce: Uint8Array };

/**
 * Reads a decoded server frame, or null for one this host cannot read (a
 * newer server's frame kind is ignored, not fatal). The answer's body is
 * decoded by its op.
 */
export function readServerFrame(value: unknown): ServerFrame | null {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const m = value as Record<string, unknown>;
  const mark = m.mark;
  if (mark instanceof Uint8Array && mark.byteLength === MARK_BYTES) return { kind: "mark", nonce: mark };
  const poke = m.poke as { rev?: unknown } | null | undefined;
  if (typeof poke === "object" && poke !== null && isUint(poke.rev)) return { kind: "poke", rev: poke.rev };
  const error = decodeWireError(m);
  if (error !== null) return { kind: "error", id: isUint(m.id) ? m.id : null, error };
  // A missing body is left to the op's decoder, which refuses it: the caller hears why.
  return isUint(m.id) ? { kind: "answer", id: m.id, body: m.body } : null;
}

/** A frame the host sends, as the server reads it. */
export type HostFrame =
  | ({ readonly kind: "request" } & SocketRequest)
  | { readonly kind: "ack"; readonly nonce: Uint8Array };

/**
 * Reads a decoded host frame: an `{ack}` or a request envelope (its body is
 * decoded by the op). Throws ProtocolError, with the frame's id when one can
 * be read (frameId), for anything else.
 */
export function readHostFrame(value: unknown): HostFrame {
  const m = readMap(value, "frame");
  const ack = m.ack;
  if (ack instanceof Uint8Array && ack.byteLength === MARK_BYTES && !("op" in m)) return { kind: "ack", nonce: ack };
  const id = readUint(m.id, "id");
  if (!isOpName(m.op)) throw new ProtocolError("bad_request", "op: not an operation", { field: "op", id });
  return { kind: "request", id, op: m.op, body: m.body };
}

function isUint(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/**
 * Close codes the server sends. 1008: the socket kept sending frames that could
 * not be read; 4401: the token expired while open; 4408: the host did not read
 * its answers in time (a mark unacknowledged for ACK_TIMEOUT_MS, or too many
 * requests refused for want of an ack), which a host that was only paused (a
 * laptop asleep) reconnects from. (1011, "the server failed", comes from the
 * runtime when the object itself fails, never from ferry's code.)
 */
export const CLOSE_POLICY = 1008;
export const CLOSE_TOKEN_EXPIRED = 4401;
export const CLOSE_UNREAD = 4408;

/** Consecutive unreadable frames after which the server closes the socket. */
export const MAX_BAD_FRAMES = 16;

/**
 * A request frame's id read from its bytes, without decoding the frame: the
 * object refuses a frame its in-flight budget cannot hold before decoding it
 * (worker/do/socket.ts), and the refusal must name the request so the host
 * retries it. Null when the frame is not a map with an unsigned `id`.
 */
export function peekFrameId(frame: Uint8Array): number | null {
  try {
    const heads = new CborHeads(frame);
    let pairs = heads.nextOf(5);
    if (pairs === null) return null;
    for (; pairs > 0; pairs--) {
      const keyBytes = heads.nextOf(3);
      if (keyBytes === null) return null;
      const key = heads.at;
      heads.skip(keyBytes);
      if (keyBytes === 2 && frame[key] === 0x69 && frame[key + 1] === 0x64) {
        const id = heads.nextOf(0);
        return id !== null && Number.isSafeInteger(id) ? id : null;
      }
      weighItem(heads, Number.POSITIVE_INFINITY);
    }
  } catch {
    // Unreadable before its id: the refusal goes without one.
  }
  return null;
}

/**
 * Whether a frame is a host's `{ack: nonce}`, read from its bytes: the
 * object never refuses one for its in-flight budget, since an ack frees
 * answer credit (§8.2) and holds next to nothing.
 */
export function isAckFrame(frame: Uint8Array): boolean {
  try {
    const heads = new CborHeads(frame);
    if (heads.nextOf(5) !== 1 || heads.nextOf(3) !== 3) return false;
    const key = heads.at;
    heads.skip(3);
    if (frame[key] !== 0x61 || frame[key + 1] !== 0x63 || frame[key + 2] !== 0x6b) return false;
    return heads.nextOf(2) === MARK_BYTES && heads.at + MARK_BYTES === frame.byteLength;
  } catch {
    return false;
  }
}

/** Best effort: the id of a frame that failed to decode, so its error can be matched. */
export function frameId(value: unknown): number | null {
  if (value === null || typeof value !== "object") return null;
  const id = (value as { id?: unknown }).id;
  return isUint(id) ? id : null;
}
