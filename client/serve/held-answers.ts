/**
 * Answer bytes the front door (front-door.ts) has taken off the runtime and
 * its peers have not yet taken, across every connection of one `ferry serve`.
 *
 * The door reads what the runtime answers as it comes, whether or not the
 * peer reads: an answer waiting in the runtime keeps its room of the process
 * budget (worker/do/answer-room.ts), and the line of requests behind it
 * waits, so a few clients that never read would hold up every other host;
 * here it waits in one copy, counted. Past HELD_BYTES in all, the peers that
 * have taken nothing for STALE_MS are cut, longest first, which frees it;
 * if that is not enough, a connection whose peer has not taken what it was
 * sent is held back (read no further, its answer left in the runtime) until
 * its peer catches up, and cut if it takes nothing for HELD_BACK_STALL_MS:
 * its answer's room lapses in the runtime meanwhile (answer-room.ts). A
 * peer that takes nothing for its stall limit is cut whatever the total. One
 * connection holds at most CONNECTION_HELD_BYTES before the door stops
 * reading the runtime for it: a streamed answer (a file's bytes) then waits
 * in the runtime, which makes it only as it is read.
 */

/** Answer bytes held for peers, in all, before stale ones are cut: two objects/get answers. */
export const HELD_BYTES = 16 * 1024 * 1024;
/**
 * Past the budget, the peers that have taken nothing for this long are cut,
 * longest first. A host that reads takes bytes within milliseconds (its
 * kernel takes them); eighty clients asking for 8 MiB each 20 ms apart and
 * never reading are cut a few at a time, and the door holds what came in
 * that while. Hosts retry a request whose connection was cut
 * (client/transport/retry.ts).
 */
export const STALE_MS = 250;
/** A held-back peer that takes nothing for this long is cut: its answer, left in the runtime, is freed. */
export const HELD_BACK_STALL_MS = 1000;
/** One connection's answers held before the runtime is read no further for it: more than one objects/get answer. */
export const CONNECTION_HELD_BYTES = 16 * 1024 * 1024;
/** How often the held connections are looked at, while there are any; and at most how often past the budget. */
export const LOOK_EVERY_MS = 100;
const LOOK_AGAIN_MS = 10;

/** One connection as the door relays it. */
export interface Holder {
  /** Bytes the peer has not taken yet (a socket's `writableLength`). */
  waiting(): number;
  /** Every byte passed to the peer so far. */
  written: number;
  /** How long the peer may take nothing while bytes wait before it is cut. */
  stallLimitMs(): number;
  /** Ends the connection, both sides. */
  cut(): void;
}

interface Holding {
  /** Bytes its peer had taken when last looked at, and when that last grew. */
  taken: number;
  lastTaken: number;
  waiting: number;
}

export class HeldAnswers {
  private readonly holding = new Map<Holder, Holding>();
  /** The sum of `waiting` as last looked at, plus what was written since. */
  private total = 0;
  private timer: NodeJS.Timeout | undefined;
  private lookedAt = Number.NEGATIVE_INFINITY;

  constructor(
    readonly budget = HELD_BYTES,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** After `bytes` were passed to `holder`'s peer: counts them while they wait. */
  wrote(holder: Holder, bytes: number): void {
    const waiting = holder.waiting();
    if (waiting === 0) return;
    const holding = this.holding.get(holder);
    if (holding === undefined) {
      this.holding.set(holder, { taken: holder.written - waiting, lastTaken: this.now(), waiting });
      this.total += waiting;
      this.timer ??= setInterval(() => this.look(), LOOK_EVERY_MS).unref();
    } else {
      holding.waiting += bytes;
      this.total += bytes;
    }
    if (this.total > this.budget && this.now() - this.lookedAt >= LOOK_AGAIN_MS) this.look();
  }

  /** `holder` ended, or its peer took everything: what it was last seen holding. */
  forget(holder: Holder): number {
    const holding = this.holding.get(holder);
    if (holding === undefined) return 0;
    this.holding.delete(holder);
    this.total -= holding.waiting;
    return holding.waiting;
  }

  /** Bytes held for peers now, as last counted. */
  get held(): number {
    return this.total;
  }

  /** Past the budget, with no stale peer left to cut: a connection whose peer lags is read no further. */
  get full(): boolean {
    return this.total > this.budget;
  }

  /** Recounts what waits, and cuts the peers that took nothing for their stall limit, or past the budget for STALE_MS. */
  private look(): void {
    const now = this.now();
    this.lookedAt = now;
    this.total = 0;
    for (const [holder, holding] of this.holding) {
      holding.waiting = holder.waiting();
      if (holding.waiting === 0) {
        this.holding.delete(holder);
        continue;
      }
      const taken = holder.written - holding.waiting;
      if (taken > holding.taken) {
        holding.taken = taken;
        holding.lastTaken = now;
      }
      if (now - holding.lastTaken < holder.stallLimitMs()) this.total += holding.waiting;
      else {
        this.holding.delete(holder);
        holder.cut();
      }
    }
    if (this.total > this.budget) this.cutStale(now);
    if (this.holding.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** Cuts the peers that have taken nothing for STALE_MS, longest first, until the rest fit the budget. */
  private cutStale(now: number): void {
    const stale = [...this.holding].filter(([, h]) => now - h.lastTaken >= STALE_MS);
    for (const [holder, holding] of stale.sort(([, a], [, b]) => a.lastTaken - b.lastTaken)) {
      if (this.total <= this.budget) return;
      this.total -= holding.waiting;
      this.holding.delete(holder);
      holder.cut();
    }
  }
}
