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
 *
 * The bytes sent and not acknowledged also count against the process's
 * share for answers (answer-share.ts) and its budget (inflight.ts), by
 * socket id, until acknowledged or the socket closes: twelve sockets that
 * never read each held their own 32 MiB bound. A socket whose mark is not
 * acknowledged within ACK_TIMEOUT_MS is closed (the object's alarm,
 * pokes.ts), with CLOSE_UNREAD, and its share is given back once its
 * connection ends (closeFromServer).
 */
import { ACK_TIMEOUT_MS, MARK_AFTER_BYTES } from "../../protocol/flow.ts";
import { toHex } from "../../protocol/hash.ts";
import type { OpName } from "../../protocol/ops.ts";
import { encodeMark, MARK_BYTES } from "../../protocol/ws.ts";
import { MAX_PAGE_BYTES } from "../sync/changes.ts";
import {
  ANSWER_OVERHEAD,
  forgetQueued,
  holdQueued,
  holdUntilEnded,
  SOCKET_GET_BYTES,
  shareCrowded,
} from "./answer-share.ts";
import { letGoOf } from "./reclaim.ts";
import { readSocketState, type SocketState, writeSocketState } from "./socket-state.ts";

/**
 * Requests refused for want of acknowledgement, since the last ack, after
 * which the socket is closed with 1008: refusals are answers too, and a
 * host that never reads would otherwise grow the buffer by one each frame.
 */
export const MAX_CREDIT_REFUSALS = 1024;

/** The most bytes the answer to `op` may take, reserved while it is computed. */
export function answerReserve(op: OpName, body: unknown): number {
  switch (op) {
    case "getObjects":
      return SOCKET_GET_BYTES + ANSWER_OVERHEAD;
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
  // A socket closed meanwhile, its queue already forgotten (forgetSocket): the runtime drops what is sent
  // on it without a word, and bytes counted now would hold the share for good. A host dropped mid-pull
  // (no close frame) with objects/get still running left 8 MiB counted until the server restarted.
  if (state === null || isGone(state.sid)) return;
  state.unacked = unackedOf(state) + bytes;
  holdQueued(state.sid, bytes);
  // The runtime's queue holds the frame now: what it was built from (rows, the encoding) is garbage.
  letGoOf(bytes);
  markIfDue(ws, state);
  writeSocketState(ws, state);
}

/** The host read everything up to `nonce`: those bytes no longer count. A stale or unknown nonce is ignored. */
export function acknowledge(ws: WebSocket, state: SocketState, nonce: Uint8Array): void {
  if (state.mark === undefined || state.mark === null || state.mark !== toHex(nonce)) return;
  state.unacked = Math.max(0, unackedOf(state) - (state.marked ?? 0));
  forgetQueued(state.sid, state.marked ?? 0);
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

/**
 * When the socket's outstanding mark is overdue (now or later), or null
 * when none is outstanding. The object's alarm closes it then (pokes.ts).
 */
export function ackDueAt(state: SocketState): number | null {
  return (state.mark ?? null) === null || state.markedAt === undefined ? null : state.markedAt + ACK_TIMEOUT_MS;
}

/**
 * Closes a socket of object `owner` from the server's side (it does not
 * read, its token expired, its workspace was deleted). Nothing sent on it
 * counts from now; what it was sent and has not acknowledged keeps its
 * share until its connection ends, as the runtime keeps those frames while
 * the peer holds the connection open (answer-share.ts holdUntilEnded).
 * True when it does: the object's alarm is then to look for the end (pokes.ts).
 */
export function closeFromServer(
  ws: WebSocket,
  state: SocketState,
  code: number,
  reason: string,
  owner: string,
): boolean {
  try {
    ws.close(code, reason);
  } catch {
    // Already closed.
  }
  markGone(state.sid);
  return holdUntilEnded(state.sid, ws, owner);
}

/**
 * Sockets (by sid) closed lately, their queues forgotten: a request still
 * waiting or running when its socket closed finishes within seconds, so
 * the most recent GONE_REMEMBERED are enough.
 */
const gone = new Set<string>();
const GONE_REMEMBERED = 4096;

/** Whether the socket `sid` has closed (forgetSocket, closeFromServer): nothing sent on it counts any more. */
export function isGone(sid: string): boolean {
  return gone.has(sid);
}

/** The socket's connection ended (its host closed, or it dropped): its queued answers no longer count. */
export function forgetSocket(state: SocketState): void {
  markGone(state.sid);
  forgetQueued(state.sid, Number.POSITIVE_INFINITY);
}

function markGone(sid: string): void {
  gone.add(sid);
  if (gone.size > GONE_REMEMBERED) gone.delete(gone.values().next().value as string);
}

function markIfDue(ws: WebSocket, state: SocketState): void {
  if ((state.mark ?? null) !== null || unackedOf(state) === 0) return;
  // In a crowded share any unacknowledged answer is marked: a host that reads gives its room back at once.
  if (unackedOf(state) < MARK_AFTER_BYTES && !shareCrowded()) return;
  const nonce = crypto.getRandomValues(new Uint8Array(MARK_BYTES));
  try {
    ws.send(encodeMark(nonce));
  } catch {
    return; // closed: nothing more will be sent
  }
  state.mark = toHex(nonce);
  state.marked = unackedOf(state);
  state.markedAt = Date.now();
}
