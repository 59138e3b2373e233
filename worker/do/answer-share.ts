/**
 * The process's share for answers on sockets (PROTOCOL.md §8.2): the bytes
 * every socket has sent and its host not yet acknowledged (answer-credit.ts
 * counts them), and the bytes reserved for answers being computed, together
 * at most MAX_PROCESS_ANSWER_BYTES. The runtime buffers whatever a host does
 * not read, with no backpressure, so the share bounds what sockets that
 * never read hold of the process's memory; an HTTP answer keeps a room of
 * the process budget until the runtime has sent it (answer-room.ts).
 *
 * Module state, like the process budget (inflight.ts): in local workerd
 * (`ferry serve`) every workspace's sockets share it, so a read token for
 * any workspace is enough to hold it. Hence the two waits in
 * awaitAnswerRoom: a socket waits for its own answers' room as long as its
 * own ack takes, but for other sockets' only as long as a reading host's
 * ack takes, and is then told that others hold it (`heldByOthers`), which
 * the reference client takes as its cue to ask over HTTP.
 */
import { ProtocolError } from "../../protocol/errors.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { LINE_POLL_MS, MAX_WAIT_MS, PROCESS_BUDGET, RETRY_AFTER_MS } from "./inflight.ts";
import { reclaimIfDue } from "./reclaim.ts";

/** Framing and error bodies around an answer's payload. */
export const ANSWER_OVERHEAD = 64 * 1024;

/**
 * Room in the share, past one objects/get answer, for the small answers
 * hosts have read but not yet acknowledged (a mark follows only 4 MiB of
 * them, or a crowded share: answer-credit.ts markIfDue).
 */
const SMALL_ANSWERS_ROOM = 1024 * 1024;

/**
 * Most object bytes one objects/get answers over a socket: maxGetBytes,
 * 4 MiB. A socket that never reads holds one such answer of the share
 * below, and the runtime holds ~3.5 times its bytes: with 8 MiB answers the
 * silent sockets alone grew the process by ~30 MiB. Sockets were held to
 * half of an 8 MiB maxGetBytes (a server may stop earlier, PROTOCOL.md
 * §4.4) before every answer was (protocol/limits.ts).
 */
export const SOCKET_GET_BYTES = LIMITS.maxGetBytes;

/**
 * Answer bytes every socket of the process may hold at once, queued unread
 * or reserved while computed: one objects/get answer. The runtime holds
 * ~3.5 times an unread answer's bytes (its send queue and the copies between
 * the object and the client's connection: workerd grew by ~30 MiB for each
 * 8 MiB answer twelve sockets that never read left queued), so three of
 * them, as this allowed before, were ~90 MiB of the 128 the process may
 * grow by (bench:hostile-memory, 2026-12-06). Not the whole process budget
 * either, so requests always have the rest.
 */
export const MAX_PROCESS_ANSWER_BYTES = SOCKET_GET_BYTES + ANSWER_OVERHEAD + SMALL_ANSWERS_ROOM;

/**
 * How long a request waits for room that other sockets' answers hold: a
 * host that reads acknowledges its answer within a round trip of reading
 * it (once the share is crowded every answer is marked), tens of ms on
 * loopback. Sockets that never read hold theirs until their 30 s ack
 * timeout, and three of them held every other host's socket pull that long
 * when a request waited MAX_WAIT_MS each time (issue 28); refused after
 * this, the host asks over HTTP instead.
 */
export const OTHERS_WAIT_MS = 500;

/** `WebSocket.readyState` once the connection has ended. */
const CLOSED = 3;

/**
 * Sockets (by sid) the server closed whose connection has not ended
 * (answer-credit.ts closeFromServer: for not reading, mostly), with the
 * object they belong to.
 * The runtime keeps the frames queued for a peer that does not read, close
 * frame last, for as long as the peer keeps the connection open, and sends
 * the object no event when it ends; but the socket's readyState turns
 * CLOSED then. So such a socket's queued answers hold their share until it
 * does (releaseEnded): given back at the close, the room went to the next
 * socket that does not read, and every 30 s ack timeout left ~25 MiB more
 * queued in workerd (bench:hostile-memory --seconds 45 --attacks sockets:
 * 37 -> 61 MiB). Only its own object can read a socket's readyState (the
 * runtime refuses I/O objects across objects), so each object looks at its
 * own, from its alarm (pokes.ts).
 */
const closing = new Map<string, { readonly ws: WebSocket; readonly owner: string }>();

/** Answer bytes each socket (by sid) has sent and not had acknowledged, counted against the process budget. */
const queued = new Map<string, number>();
/** Answer bytes each socket (by sid) has reserved for answers being computed (reserveAnswer). */
const reserved = new Map<string, number>();
/** Every socket's queued and reserved bytes together. */
let answerBytes = 0;

/**
 * Reserves room for socket `sid`'s answer of at most `bytes` (answerReserve)
 * in the share, or returns the refusal: `heldByOthers` when the room would
 * not come free even once this socket's own answers are read. One answer is
 * always admitted when no socket holds any.
 */
export function reserveAnswer(sid: string, bytes: number): ProtocolError | null {
  // Refused or not, a request is a moment to collect: refusals alone never reach the budget's own check.
  reclaimIfDue();
  if (answerBytes > 0 && answerBytes + bytes > MAX_PROCESS_ANSWER_BYTES) return crowded(sid, bytes);
  answerBytes += bytes;
  add(reserved, sid, bytes);
  return null;
}

/**
 * Reserves room as reserveAnswer does, waiting for it: while this socket's
 * own answers stand in the way, up to MAX_WAIT_MS (its host's ack frees
 * them, and its next request is served then rather than sent again a
 * second later); while other sockets' do, up to OTHERS_WAIT_MS. The frame
 * waiting is small and counted already (socket.ts), and the socket's
 * window bounds how many wait.
 */
export async function awaitAnswerRoom(sid: string, bytes: number): Promise<ProtocolError | null> {
  const started = Date.now();
  for (;;) {
    const refusal = reserveAnswer(sid, bytes);
    if (refusal === null) return null;
    const waited = Date.now() - started;
    if (waited >= (refusal.details.heldByOthers === true ? OTHERS_WAIT_MS : MAX_WAIT_MS)) return refusal;
    // Looked for in its own object, as inflight.ts's line does: another object cannot wake it.
    await new Promise((resolve) => setTimeout(resolve, LINE_POLL_MS));
  }
}

/** Gives back socket `sid`'s reservation (reserveAnswer), once its answer is sent or refused. */
export function releaseAnswer(sid: string, bytes: number): void {
  answerBytes -= bytes;
  add(reserved, sid, -bytes);
}

/** Counts `bytes` socket `sid` just sent, until its host acknowledges them (forgetQueued). */
export function holdQueued(sid: string, bytes: number): void {
  add(queued, sid, bytes);
  answerBytes += bytes;
  PROCESS_BUDGET.add(bytes);
}

/** Up to `bytes` of socket `sid`'s queued answers were read (or the socket is gone: all of them). */
export function forgetQueued(sid: string, bytes: number): void {
  const freed = Math.min(queued.get(sid) ?? 0, bytes);
  add(queued, sid, -freed);
  answerBytes -= freed;
  PROCESS_BUDGET.release(freed);
}

/**
 * Socket `sid` of object `owner`, just closed by the server: its queued
 * answers keep their share until its connection ends. True when it holds any.
 */
export function holdUntilEnded(sid: string, ws: WebSocket, owner: string): boolean {
  if ((queued.get(sid) ?? 0) === 0) return false;
  closing.set(sid, { ws, owner });
  return true;
}

/**
 * Gives back the queued answers of object `owner`'s sockets the server
 * closed whose connection has ended since; true while any of them still holds.
 */
export function releaseEnded(owner: string): boolean {
  let holding = false;
  for (const [sid, socket] of closing) {
    if (socket.owner !== owner) continue;
    if (connectionEnded(socket.ws)) {
      closing.delete(sid);
      forgetQueued(sid, Number.POSITIVE_INFINITY);
    } else holding = true;
  }
  return holding;
}

function connectionEnded(ws: WebSocket): boolean {
  try {
    return ws.readyState === CLOSED;
  } catch {
    return true; // unreadable (its object was evicted): nothing can tell, and holding on would hold the share for good
  }
}

/**
 * Whether the share could not take an objects/get answer beside what it
 * holds: then every answer is marked (answer-credit.ts), so that readers
 * give their room back at once. So the answers sent without a mark (under
 * MARK_AFTER_BYTES on their socket) hold at most SMALL_ANSWERS_ROOM
 * together, and any request fits beside them: whatever else it waits for
 * is marked, or running. Marked only past half the share, a reading
 * host's answers sent while the share was under half full (1.2 MB of them
 * in one heavy pull) left its next objects/get waiting on an ack nobody
 * asked for, 5 s and refused, again and again: 2 of 4 heavy-tree pulls
 * over the socket failed `rate_limited` (issue 28).
 */
export function shareCrowded(): boolean {
  return answerBytes > SMALL_ANSWERS_ROOM;
}

function crowded(sid: string, bytes: number): ProtocolError {
  const others = answerBytes - (queued.get(sid) ?? 0) - (reserved.get(sid) ?? 0);
  const details = { limit: MAX_PROCESS_ANSWER_BYTES, retryAfterMs: RETRY_AFTER_MS };
  if (others > 0 && others + bytes > MAX_PROCESS_ANSWER_BYTES) {
    const message = `other sockets hold ${others} answer bytes not read (at most ${MAX_PROCESS_ANSWER_BYTES} for all): ask over HTTP, or retry in ${RETRY_AFTER_MS} ms`;
    return new ProtocolError("rate_limited", message, { ...details, heldByOthers: true });
  }
  const message = `the server's sockets hold ${answerBytes} answer bytes not read (at most ${MAX_PROCESS_ANSWER_BYTES}), this one's among them: reply to marks, and retry in ${RETRY_AFTER_MS} ms`;
  return new ProtocolError("rate_limited", message, details);
}

function add(counts: Map<string, number>, sid: string, bytes: number): void {
  const now = (counts.get(sid) ?? 0) + bytes;
  if (now > 0) counts.set(sid, now);
  else counts.delete(sid);
}
