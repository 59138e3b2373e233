/**
 * What one sync socket keeps across hibernation, in its attachment
 * (`serializeAttachment`, at most 2 KiB): the token's rights and expiry, the
 * host id its hello named, the count of consecutive unreadable frames, and
 * its poke state. Everything else about a socket lives only while the object
 * is in memory (requests in flight, in socket.ts), which is safe because the
 * runtime only evicts an object with no event in progress.
 */
import { hashesEqual } from "../../protocol/hash.ts";
import type { Rights } from "../../protocol/token.ts";

/** Pokes a socket may receive at once; then at most POKE_RATE a second. */
export const POKE_BURST = 4;
export const POKE_RATE = 4;

export interface SocketState {
  /** Names this socket in the pokes sent after its own push (socket identity does not survive eviction). */
  readonly sid: string;
  readonly rights: Rights;
  /** Token expiry, Unix seconds: the socket is closed with 4401 at this time. */
  readonly exp: number;
  /** The host id of this socket's last hello, or null before one. */
  hostId: Uint8Array | null;
  /** Consecutive frames that could not be read; reset by a readable one. */
  badFrames: number;
  /** Pokes this socket may be sent now (a token bucket, pokes.ts), as of `refilledAt` (ms). */
  pokeTokens: number;
  refilledAt: number;
  /** The rev of a poke held back to keep the rate, sent when a token comes. */
  pendingRev: number | null;
  /**
   * Answer bytes sent and not acknowledged, the outstanding mark's nonce
   * (hex) and the count it covers (answer-credit.ts). Optional: sockets
   * accepted before these existed have none.
   */
  unacked?: number;
  mark?: string | null;
  marked?: number;
  /** When the outstanding mark was sent (ms): the socket is closed if it is not acknowledged in time. */
  markedAt?: number;
  /** Requests refused since the last ack for want of one (answer-credit.ts). */
  creditRefusals?: number;
}

export function newSocketState(rights: Rights, exp: number): SocketState {
  return {
    sid: crypto.randomUUID(),
    rights,
    exp,
    hostId: null,
    badFrames: 0,
    pokeTokens: POKE_BURST,
    refilledAt: 0,
    pendingRev: null,
    unacked: 0,
    mark: null,
    marked: 0,
  };
}

/** The socket's state, or null for a socket this object did not accept as a sync socket. */
export function readSocketState(ws: WebSocket): SocketState | null {
  const value = ws.deserializeAttachment() as SocketState | null;
  return value && typeof value === "object" && typeof value.sid === "string" ? value : null;
}

export function writeSocketState(ws: WebSocket, state: SocketState): void {
  ws.serializeAttachment(state);
}

export function isExpired(state: SocketState, nowMs: number): boolean {
  return state.exp * 1000 <= nowMs;
}

/** Who pushed: the socket (its sid) and the host. Both null for a push over HTTP. */
export interface Pusher {
  readonly sid: string | null;
  readonly hostId: Uint8Array | null;
}

/** True when this socket belongs to the pusher: the same socket, or a socket of the same host. */
export function isPusher(state: SocketState, pusher: Pusher): boolean {
  if (pusher.sid !== null && state.sid === pusher.sid) return true;
  return pusher.hostId !== null && state.hostId !== null && hashesEqual(state.hostId, pusher.hostId);
}
