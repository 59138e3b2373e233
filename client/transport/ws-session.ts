/**
 * What one socket has heard since its hello, so that WsTransport can answer
 * a repeated hello on the same socket without a round trip (a watcher says
 * hello before every sync, and on a live socket that is a third of the
 * round trips of a one-file change).
 *
 * The answer is what the server would say: the epoch, version, limits and
 * capabilities cannot change while the socket stays open (a server restart
 * drops it); `acked` for this host moves only by this host's pushes, whose
 * answers pass through here; `rev` is the newest the socket has heard (hello,
 * push and changes answers, pokes). A rev that moved without a poke yet is
 * caught up by the poke, which always comes. `resync` is computed as the
 * server does (PROTOCOL.md §4.1). A real hello goes out again after
 * REFRESH_MS, on a new socket, for another host id or version, and while a
 * push is unanswered.
 */

import type { Cursor } from "../../protocol/cursor.ts";
import { ackedOf, isOtherHistory } from "../../protocol/error-details.ts";
import { hashesEqual } from "../../protocol/hash.ts";
import { type HelloRequest, type HelloResponse, positionLost } from "../../protocol/hello.ts";
import type { OpName, OpRequest, OpResponse } from "../../protocol/ops.ts";

/** A real hello at least this often: it refreshes the server's last-seen time for the host. */
export const REFRESH_MS = 30_000;

export class SocketSession {
  private hello: HelloResponse | null = null;
  private hostId: Uint8Array | null = null;
  private rev = 0;
  private acked: Cursor = { rev: 0, path: null };
  private heardAt = 0;
  /** The server holds objects: its hello said so, or an upload on this socket stored or found one. */
  private holdsObjects = false;
  /** Pushes unanswered: no hello is answered here meanwhile, since each may move `acked`. */
  private pushes = 0;
  /** Hellos answered here rather than by the server. */
  answered = 0;

  /** A new socket: nothing heard on it yet. */
  reset(): void {
    this.hello = null;
    this.hostId = null;
  }

  poked(rev: number): void {
    this.rev = Math.max(this.rev, rev);
  }

  /** Records a successful answer. */
  heard<K extends OpName>(op: K, req: OpRequest<K>, res: OpResponse<K>): void {
    if (op === "hello") {
      const hello = res as HelloResponse;
      this.hello = hello;
      this.hostId = (req as HelloRequest).hostId;
      this.rev = hello.rev;
      this.acked = hello.acked;
      this.heardAt = Date.now();
      this.holdsObjects = hello.holdsObjects === true;
    } else if (op === "putObjects") {
      const { stored, present } = res as OpResponse<"putObjects">;
      if (stored + present > 0) this.holdsObjects = true;
    } else if (op === "push" && this.isHost((req as OpRequest<"push">).hostId)) {
      const pushed = res as OpResponse<"push">;
      this.acked = pushed.acked;
      this.rev = Math.max(this.rev, pushed.rev);
    } else if (op === "changes") {
      this.rev = Math.max(this.rev, (res as OpResponse<"changes">).rev);
    }
  }

  /** A push refused with the server's `acked` (cursor_mismatch) tells where this host stands. */
  heardAcked(hostId: Uint8Array, acked: Cursor): void {
    if (this.isHost(hostId)) this.acked = acked;
  }

  /** Follows one call to its answer: what it tells about the server is recorded before the caller sees it. */
  track<K extends OpName>(op: K, req: OpRequest<K>, answer: Promise<OpResponse<K>>): Promise<OpResponse<K>> {
    if (op !== "push")
      return answer.then(
        (res) => this.recorded(op, req, res),
        (error: unknown) => this.refused(error),
      );
    this.pushes++;
    return answer.then(
      (res) => {
        this.pushes--;
        return this.recorded(op, req, res);
      },
      (error: unknown) => {
        this.pushes--;
        const acked = ackedOf(error);
        if (acked) this.heardAcked((req as OpRequest<"push">).hostId, acked);
        return this.refused(error);
      },
    );
  }

  /** The server's answer to this hello from what the socket has heard, or null when only the server can say. */
  answer(req: HelloRequest): HelloResponse | null {
    const hello = this.hello;
    if (hello === null || !this.isHost(req.hostId) || req.version !== hello.version || this.pushes > 0) return null;
    if (Date.now() - this.heardAt >= REFRESH_MS) return null;
    const resync = positionLost(req.pull, hello.epoch, this.rev);
    this.answered++;
    // `horizon` qualified the heard hello's resync, not this one (only the server can say it).
    // `holdsObjects` is said at rev 0 only, and uploads on this socket may have landed since.
    // `time` was the server's clock then, not now: a host sets its own by real answers only.
    const { horizon: _horizon, holdsObjects: _holds, time: _time, ...heard } = hello;
    const holds = this.rev === 0 && this.holdsObjects ? { holdsObjects: true } : {};
    return { ...heard, rev: this.rev, acked: this.acked, resync, ...holds };
  }

  /**
   * A `cursor_mismatch` without `acked` says the host's position is not in
   * the server's history (PROTOCOL.md §4.6): only the server can answer the
   * hello that follows, with `resync`, so what this socket heard is dropped.
   */
  private refused(error: unknown): never {
    if (isOtherHistory(error)) {
      this.hello = null;
    }
    throw error;
  }

  private recorded<K extends OpName>(op: K, req: OpRequest<K>, res: OpResponse<K>): OpResponse<K> {
    this.heard(op, req, res);
    return res;
  }

  private isHost(hostId: Uint8Array): boolean {
    return this.hostId !== null && hashesEqual(this.hostId, hostId);
  }
}
