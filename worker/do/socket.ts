/**
 * WebSocket sync (PROTOCOL.md §8) on the hibernation API: the workspace
 * object hands its upgrade and socket events here. Each binary frame is one
 * request `{id, op, body}`, run through the object's one door (door.ts), as
 * HTTP's are, so both transports share every operation, rights check and
 * error. A frame is read once (socket-frames.ts) into its envelope or a
 * refusal:
 *
 *   frame → readable? (else an error answer with id null, and after
 *   MAX_BAD_FRAMES in a row, close 1008) → window free? (else rate_limited,
 *   not processed) → room for its answer? (waits for it, answer-share.ts)
 *   → door.ts run → `{id, body}` or `{id, error}`.
 *
 * After a push commits, over a socket or HTTP, every other socket is poked
 * (afterRun, pokes.ts).
 */
import { ProtocolError } from "../../protocol/errors.ts";
import { fitsWindow, inflightByteBound, MAX_UNACKED_BYTES } from "../../protocol/flow.ts";
import { LIMITS } from "../../protocol/limits.ts";
import type { Rights } from "../../protocol/token.ts";
import {
  answerFrameParts,
  CLOSE_POLICY,
  CLOSE_TOKEN_EXPIRED,
  CLOSE_UNREAD,
  encodeErrorFrame,
  MAX_BAD_FRAMES,
  peekFrameId,
  type SocketRequest,
} from "../../protocol/ws.ts";
import type { SyncContext } from "../sync/db.ts";
import {
  ackDueAt,
  acknowledge,
  answerReserve,
  countSent,
  forgetSocket,
  isGone,
  refusedForCredit,
  unackedOf,
} from "./answer-credit.ts";
import { awaitAnswerRoom, releaseAnswer, SOCKET_GET_BYTES } from "./answer-share.ts";
import { type Outcome, run } from "./door.ts";
import { joinFrame } from "./frame-buffer.ts";
import { InflightBudget } from "./inflight.ts";
import type { Pokes } from "./pokes.ts";
import { letGoOf, reclaimIfDue } from "./reclaim.ts";
import { chargeOf, readFrame, type UnreadableFrame } from "./socket-frames.ts";
import {
  isExpired,
  newSocketState,
  type Pusher,
  readSocketState,
  type SocketState,
  writeSocketState,
} from "./socket-state.ts";

/**
 * Rights reach the object as an argument of every HTTP call (workspace.ts
 * serve) and, for a socket, on the upgrade the Worker forwards: an RPC
 * call cannot hand back a WebSocket (workerd: DataCloneError), so the
 * upgrade goes through the object's fetch, and these headers are written
 * (upgradeFor) and read (accept) here only.
 */
const RIGHTS_HEADER = "x-ferry-rights";
const EXP_HEADER = "x-ferry-exp";

/** The socket upgrade the Worker forwards to the object after auth, carrying the token's rights and expiry. */
export function upgradeFor(request: Request, rights: Rights, exp: number): Request {
  const headers = new Headers(request.headers);
  headers.set(RIGHTS_HEADER, rights);
  headers.set(EXP_HEADER, String(exp));
  return new Request(request.url, { headers });
}

/**
 * Request bytes one socket may have in flight (PROTOCOL.md §8.2), so a
 * window of large uploads cannot take the object's 128 MB.
 */
export const MAX_INFLIGHT_BYTES = inflightByteBound(LIMITS);

export class SyncSockets {
  /**
   * Requests being processed, per socket. In memory only: the runtime evicts
   * an object only when no event is running, so nothing is in flight then.
   */
  private readonly inflight = new WeakMap<WebSocket, { requests: number; bytes: number; answers: number }>();

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly sync: SyncContext,
    private readonly pokes: Pokes,
    /** The object's request bytes in flight, shared with HTTP (inflight.ts). */
    private readonly budget: InflightBudget = new InflightBudget(),
  ) {}

  /** The upgrade the Worker forwarded after auth (upgradeFor), with the token's rights and expiry. */
  async accept(request: Request): Promise<Response> {
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
      return new Response("expected a WebSocket upgrade", { status: 426 });
    }
    const rights = request.headers.get(RIGHTS_HEADER);
    const exp = Number(request.headers.get(EXP_HEADER));
    // Only the Worker reaches the object, and upgradeFor always sets both.
    if ((rights !== "r" && rights !== "rw") || !Number.isSafeInteger(exp)) {
      return new Response("no rights forwarded", { status: 403 });
    }
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.ctx.acceptWebSocket(server);
    writeSocketState(server, newSocketState(rights, exp));
    await this.pokes.wakeBy(exp * 1000);
    return new Response(null, { status: 101, webSocket: client });
  }

  /**
   * After an operation ran, over HTTP (workspace.ts, NO_PUSHER) or a socket
   * (the pusher's own): a push that committed pokes every other socket.
   */
  async afterRun(outcome: Outcome, pusher: Pusher): Promise<void> {
    if (outcome.op !== "push" || "refusal" in outcome || !outcome.response.applied) return;
    try {
      await this.pokes.afterCommit(outcome.response.rev, pusher);
    } catch (e) {
      // The push committed and its answer must still reach the host; a lost poke only delays other hosts' pulls.
      console.error("workspace: poke after a push failed", e);
    }
  }

  /** The host closed: complete the handshake (a no-op where the runtime already answered it). */
  closed(ws: WebSocket, code: number, reason: string): void {
    const state = readSocketState(ws);
    if (state !== null) forgetSocket(state);
    try {
      // 1005 and 1006 name the absence of a code and cannot be sent back.
      ws.close(code === 1005 || code === 1006 ? 1000 : code, reason);
    } catch {
      // Already closed.
    }
  }

  /** The connection failed: nothing queued on it is held any more. */
  failed(ws: WebSocket): void {
    const state = readSocketState(ws);
    if (state !== null) forgetSocket(state);
  }

  async message(ws: WebSocket, data: string | ArrayBuffer): Promise<void> {
    const state = readSocketState(ws);
    if (state === null) return;
    if (isExpired(state, this.sync.now())) return this.pokes.close(ws, state, CLOSE_TOKEN_EXPIRED, "token expired");
    const charge = chargeOf(data);
    if ("error" in charge) return this.refused(data, () => this.unreadable(ws, state, charge));
    // Charged before it is decoded, with what decoding it holds (inflight.ts); an ack is never refused.
    const busy = charge.bytes > 0 ? this.budget.reserve(charge.bytes) : null;
    if (busy) return this.refused(data, () => answerError(ws, peekFrameId(charge.frame), busy));
    try {
      await this.handle(ws, state, charge);
    } finally {
      this.budget.release(charge.bytes);
    }
    // A mark went out: the alarm closes the socket if it is not acknowledged in time (answer-credit.ts).
    const due = ackDueAt(readSocketState(ws) ?? state);
    if (due !== null) await this.pokes.wakeBy(due);
  }

  /**
   * Answers a frame refused before the budget counted it. The runtime read
   * it whole into memory all the same (up to 32 MiB), and V8 frees it only
   * at a full collection: let go of here, as a served frame's bytes are when
   * the budget releases them, so refused frames pace collection too (reclaim.ts).
   */
  private refused(data: string | ArrayBuffer, answer: () => void): void {
    answer();
    letGoOf(typeof data === "string" ? data.length * 3 : data.byteLength);
    reclaimIfDue();
  }

  private unreadable(ws: WebSocket, state: SocketState, frame: UnreadableFrame): void {
    state.badFrames++;
    writeSocketState(ws, state);
    answerError(ws, frame.id, frame.error);
    if (state.badFrames >= MAX_BAD_FRAMES) ws.close(CLOSE_POLICY, `${MAX_BAD_FRAMES} unreadable frames in a row`);
  }

  private async handle(ws: WebSocket, state: SocketState, charge: { frame: Uint8Array; bytes: number }): Promise<void> {
    const data = charge.frame;
    const frame = readFrame(data);
    if ("error" in frame) return this.unreadable(ws, state, frame);
    if (frame.kind === "ack") return acknowledge(ws, state, frame.nonce);
    if (state.badFrames > 0) {
      state.badFrames = 0;
      writeSocketState(ws, state);
    }
    const load = this.inflight.get(ws) ?? { requests: 0, bytes: 0, answers: 0 };
    // Answers the host has not read (answer-credit.ts): the runtime would buffer them all.
    const unread = unackedOf(state) + load.answers;
    const reserve = answerReserve(frame.op, frame.body);
    if (unread > 0 && unread + reserve > MAX_UNACKED_BYTES) {
      if (refusedForCredit(ws)) return this.pokes.close(ws, state, CLOSE_UNREAD, "answers are not being read");
      const message = `${unread} answer bytes not acknowledged: reply to marks (at most ${MAX_UNACKED_BYTES})`;
      return answerError(ws, frame.id, new ProtocolError("rate_limited", message, { limit: MAX_UNACKED_BYTES }));
    }
    const bytes = data.byteLength;
    if (!fitsWindow(load, bytes, LIMITS)) {
      const message = `the window is full: at most ${LIMITS.maxInflight} requests and ${MAX_INFLIGHT_BYTES} bytes in flight`;
      return answerError(ws, frame.id, new ProtocolError("rate_limited", message, { limit: LIMITS.maxInflight }));
    }
    // In the socket's window from here, while it waits for room too: the window bounds how many wait.
    load.requests++;
    load.bytes += bytes;
    load.answers += reserve;
    this.inflight.set(ws, load);
    try {
      await this.answerWithin(ws, state, frame, { own: charge.bytes, reserve, unread });
    } finally {
      load.requests--;
      load.bytes -= bytes;
      load.answers -= reserve;
    }
  }

  /**
   * Serves `frame` once its answer has room: in the process's share for
   * answers (answer-share.ts), and against the object's and the process's
   * budgets, beside the frame's own bytes.
   */
  private async answerWithin(
    ws: WebSocket,
    state: SocketState,
    frame: SocketRequest,
    { own, reserve, unread }: { own: number; reserve: number; unread: number },
  ): Promise<void> {
    const { sid } = state;
    const crowded = await awaitAnswerRoom(sid, reserve);
    if (crowded === null && isGone(sid)) return releaseAnswer(sid, reserve); // the host went while it waited
    if (crowded) {
      // A socket refused for want of room while its own answers lie unread is one that does not read.
      if (unread > 0 && refusedForCredit(ws))
        return this.pokes.close(ws, state, CLOSE_UNREAD, "answers are not being read");
      return answerError(ws, frame.id, crowded);
    }
    const busy = this.budget.grow(own, reserve);
    if (busy) {
      releaseAnswer(sid, reserve);
      return answerError(ws, frame.id, busy);
    }
    try {
      await this.serve(ws, frame, state.rights);
    } finally {
      this.budget.release(reserve);
      releaseAnswer(sid, reserve);
    }
  }

  private async serve(ws: WebSocket, frame: SocketRequest, rights: Rights): Promise<void> {
    const body = frame.op === "getObjects" ? withinSocketGet(frame.body) : frame.body;
    const outcome = await run(this.sync, frame.op, { value: body }, rights);
    if ("refusal" in outcome) return answerError(ws, frame.id, outcome.refusal);
    send(ws, joinFrame(answerFrameParts(frame.id, outcome.op, outcome.response)));
    // Read again: other frames of this socket may have changed its state meanwhile.
    const state = readSocketState(ws);
    if (outcome.op === "hello" && state) {
      state.hostId = outcome.request.hostId;
      writeSocketState(ws, state);
    }
    if (outcome.op === "push") {
      await this.afterRun(outcome, { sid: state?.sid ?? null, hostId: outcome.request.hostId });
    }
  }
}

/** An objects/get request's body with its answer held to SOCKET_GET_BYTES (answer-share.ts); anything else as it came. */
function withinSocketGet(body: unknown): unknown {
  if (body === null || typeof body !== "object" || Array.isArray(body) || body instanceof Uint8Array) return body;
  const asked = (body as { maxBytes?: unknown }).maxBytes;
  // Anything but a number is left for the decoder to refuse.
  if (asked !== undefined && typeof asked !== "number") return body;
  return { ...body, maxBytes: Math.min(asked ?? SOCKET_GET_BYTES, SOCKET_GET_BYTES) };
}

function answerError(ws: WebSocket, id: number | null, error: ProtocolError): void {
  send(ws, encodeErrorFrame(id, error));
}

/** Sends an answer and counts its bytes against the socket's unacknowledged answers. */
function send(ws: WebSocket, bytes: Uint8Array): void {
  try {
    ws.send(bytes);
  } catch {
    // The socket closed while the request ran; the host retries it on its next socket.
    return;
  }
  countSent(ws, bytes.byteLength);
}
