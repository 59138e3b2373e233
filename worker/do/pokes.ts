/**
 * Pokes (PROTOCOL.md §8.3): after a push commits, every other sync socket of
 * the workspace is told the new rev, so its host pulls. Called by socket.ts
 * for pushes over a socket and by workspace.ts for pushes over HTTP.
 *
 * Each socket has a token bucket (POKE_BURST pokes at once, refilled at
 * POKE_RATE a second), so isolated commits are poked at once and a fast run
 * of commits costs a socket a few pokes a second. A commit that finds the
 * bucket empty is held in the socket's state (the newest rev wins) and sent
 * by the object's alarm when a token comes, so the last rev is always
 * delivered. The same alarm closes sockets whose token has expired (4401),
 * and sockets that left a mark unacknowledged too long (answer-credit.ts).
 * The alarm is shared with the collector through scheduler.ts.
 */
import { CLOSE_TOKEN_EXPIRED, CLOSE_UNREAD, encodePoke } from "../../protocol/ws.ts";
import { ackDueAt, closeFromServer, isGone } from "./answer-credit.ts";
import { releaseEnded } from "./answer-share.ts";
import type { AlarmTask, Scheduler } from "./scheduler.ts";
import {
  isExpired,
  isPusher,
  POKE_BURST,
  POKE_RATE,
  type Pusher,
  readSocketState,
  type SocketState,
  writeSocketState,
} from "./socket-state.ts";

/** The pusher of a push that came over HTTP: no socket is its own, so every socket is poked. */
export const NO_PUSHER: Pusher = { sid: null, hostId: null };

/** How often the alarm looks whether the connection of a socket the server closed has ended. */
export const ENDED_CHECK_MS = 1000;

export class Pokes implements AlarmTask {
  constructor(
    private readonly ctx: DurableObjectState,
    private readonly now: () => number,
    private readonly scheduler: Scheduler,
  ) {
    scheduler.add(this);
  }

  /** After a push committed `rev`: pokes every socket except the pusher's (`NO_PUSHER` for a push over HTTP). */
  async afterCommit(rev: number, pusher: Pusher): Promise<void> {
    const now = this.now();
    let wake: number | null = null;
    for (const ws of this.ctx.getWebSockets()) {
      const state = readSocketState(ws);
      if (state === null || isPusher(state, pusher)) continue;
      if (isExpired(state, now)) {
        closeFromServer(ws, state, CLOSE_TOKEN_EXPIRED, "token expired", this.owner);
        continue;
      }
      const due = takeToken(state, now);
      if (due === null) {
        sendPoke(ws, rev);
        state.pendingRev = null;
      } else {
        state.pendingRev = rev;
        wake = earliest(wake, due);
      }
      writeSocketState(ws, state);
    }
    if (releaseEnded(this.owner)) wake = earliest(wake, now + ENDED_CHECK_MS);
    if (wake !== null) await this.wakeBy(wake);
  }

  /**
   * Closes a socket from the server's side (answer-credit.ts
   * closeFromServer); the alarm then looks for its connection's end, which
   * gives its share back.
   */
  async close(ws: WebSocket, state: SocketState, code: number, reason: string): Promise<void> {
    if (closeFromServer(ws, state, code, reason, this.owner)) await this.wakeBy(this.now() + ENDED_CHECK_MS);
  }

  /**
   * The object's alarm: sends held pokes that are due, closes expired
   * sockets and those that do not read, gives back the share of those
   * whose connection ended; returns when to run next.
   */
  async onAlarm(now: number): Promise<number | null> {
    let wake: number | null = null;
    for (const ws of this.ctx.getWebSockets()) {
      const state = readSocketState(ws);
      if (state === null || isGone(state.sid)) continue;
      if (isExpired(state, now)) {
        closeFromServer(ws, state, CLOSE_TOKEN_EXPIRED, "token expired", this.owner);
        continue;
      }
      const ackDue = ackDueAt(state);
      if (ackDue !== null && ackDue <= now) {
        closeFromServer(ws, state, CLOSE_UNREAD, "a mark was not acknowledged in time", this.owner);
        continue;
      }
      if (ackDue !== null) wake = earliest(wake, ackDue);
      if (state.pendingRev !== null) {
        const due = takeToken(state, now);
        if (due === null) {
          sendPoke(ws, state.pendingRev);
          state.pendingRev = null;
        } else wake = earliest(wake, due);
        writeSocketState(ws, state);
      }
      wake = earliest(wake, state.exp * 1000);
    }
    if (releaseEnded(this.owner)) wake = earliest(wake, now + ENDED_CHECK_MS);
    return wake;
  }

  /** This object, as the share knows its closed sockets (answer-share.ts releaseEnded). */
  private get owner(): string {
    return this.ctx.id.toString();
  }

  /** Makes sure the alarm fires no later than `at` (a socket's token expiry). */
  wakeBy(at: number): Promise<void> {
    return this.scheduler.wakeBy(at);
  }
}

/**
 * Refills the socket's bucket to `now` and takes a token: null when one was
 * taken (poke now), else the time the next token comes.
 */
function takeToken(state: SocketState, now: number): number | null {
  const refill = ((now - state.refilledAt) * POKE_RATE) / 1000;
  state.pokeTokens = Math.min(POKE_BURST, state.pokeTokens + Math.max(0, refill));
  state.refilledAt = now;
  if (state.pokeTokens >= 1) {
    state.pokeTokens -= 1;
    return null;
  }
  return now + Math.ceil(((1 - state.pokeTokens) * 1000) / POKE_RATE);
}

function sendPoke(ws: WebSocket, rev: number): void {
  try {
    ws.send(encodePoke(rev));
  } catch {
    // The socket is closing; its close event cleans up.
  }
}

function earliest(a: number | null, b: number): number {
  return a === null ? b : Math.min(a, b);
}
