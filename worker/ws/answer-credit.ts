/**
 * Answer bytes a socket has not acknowledged (PROTOCOL.md §8.2). The
 * runtime buffers whatever a client does not read, and exposes no
 * `bufferedAmount` (workerd#988): one read-only socket that never read its
 * `objects/get` answers grew the object by ~9 MB a frame. So the server
 * counts the answer bytes it sends on each socket, follows them with a
 * `{mark}` once MARK_AFTER_BYTES are unacknowledged, and forgets them when
 * the host replies `{ack}` with the mark (frames arrive in order: the reply
 * proves everything before the mark left). A request whose largest answer
 * would take the socket past MAX_UNACKED_BYTES is answered `rate_limited`;
 * a socket refused MAX_CREDIT_REFUSALS times without an ack is closed.
 *
 * The count and the outstanding mark live in the socket's attachment
 * (socket-state.ts), so hibernation keeps them; the bytes reserved for
 * answers being computed live in socket.ts's memory, like requests in flight.
 */
import { MARK_AFTER_BYTES } from "../../protocol/flow.ts";
import { toHex } from "../../protocol/hash.ts";
import { LIMITS } from "../../protocol/limits.ts";
import type { OpName } from "../../protocol/ops.ts";
import { encodeMark, MARK_BYTES } from "../../protocol/ws.ts";
import { MAX_PAGE_BYTES } from "../sync/changes.ts";
import { readSocketState, type SocketState, writeSocketState } from "./socket-state.ts";

/**
 * Requests refused for want of acknowledgement, since the last ack, after
 * which the socket is closed with 1008: refusals are answers too, and a
 * host that never reads would otherwise grow the buffer by one each frame.
 */
export const MAX_CREDIT_REFUSALS = 1024;
/** Framing and error bodies around an answer's payload. */
const ANSWER_OVERHEAD = 64 * 1024;

/** The most bytes the answer to `op` may take, reserved while it is computed. */
export function answerReserve(op: OpName, body: unknown): number {
  switch (op) {
    case "getObjects":
      return LIMITS.maxGetBytes + ANSWER_OVERHEAD;
    case "changes":
    case "snapshot":
      return MAX_PAGE_BYTES + ANSWER_OVERHEAD;
    case "has": {
      // One byte per hash asked.
      const hashes = (body as { hashes?: unknown } | null)?.hashes;
      return (hashes instanceof Uint8Array ? hashes.byteLength / 32 : 0) + ANSWER_OVERHEAD;
    }
    default:
      return ANSWER_OVERHEAD;
  }
}

export function unackedOf(state: SocketState): number {
  return state.unacked ?? 0;
}

/** Counts `bytes` just sent on `ws`, and sends a mark when one is due. */
export function countSent(ws: WebSocket, bytes: number): void {
  const state = readSocketState(ws);
  if (state === null) return;
  state.unacked = unackedOf(state) + bytes;
  markIfDue(ws, state);
  writeSocketState(ws, state);
}

/** The host read everything up to `nonce`: those bytes no longer count. A stale or unknown nonce is ignored. */
export function acknowledge(ws: WebSocket, state: SocketState, nonce: Uint8Array): void {
  if (state.mark === undefined || state.mark === null || state.mark !== toHex(nonce)) return;
  state.unacked = Math.max(0, unackedOf(state) - (state.marked ?? 0));
  state.creditRefusals = 0;
  state.mark = null;
  state.marked = 0;
  markIfDue(ws, state);
  writeSocketState(ws, state);
}

/** Counts a refusal for want of acknowledgement; true when the socket has had too many and must close. */
export function refusedForCredit(ws: WebSocket): boolean {
  const state = readSocketState(ws);
  if (state === null) return false;
  state.creditRefusals = (state.creditRefusals ?? 0) + 1;
  writeSocketState(ws, state);
  return state.creditRefusals > MAX_CREDIT_REFUSALS;
}

function markIfDue(ws: WebSocket, state: SocketState): void {
  if ((state.mark ?? null) !== null || unackedOf(state) < MARK_AFTER_BYTES) return;
  const nonce = crypto.getRandomValues(new Uint8Array(MARK_BYTES));
  try {
    ws.send(encodeMark(nonce));
  } catch {
    return; // closed: nothing more will be sent
  }
  state.mark = toHex(nonce);
  state.marked = unackedOf(state);
}
