/**
 * Answer bytes the front door (front-door.ts) has taken off the runtime and
 * its peers have not yet taken, across every connection of one `ferry serve`.
 *
 * The door reads what the runtime answers as it comes, whether or not the
 * peer reads: an answer waiting in the runtime keeps its room of the process
 * budget (worker/do/answer-room.ts), and the line of requests behind it
 * waits, so a few clients that never read would hold up every other host;
 * here it waits in one copy, counted. Past HELD_BYTES in all, the peers that
 * have taken nothing for STALE_MS are cut, longest first; past twice that,
 * the peers that have taken nothing longest, however recently, until the
 * rest fit. A peer that takes nothing for its stall limit is cut whatever
 * the total. One connection holds at most CONNECTION_HELD_BYTES before the
 * door stops reading the runtime for it: a streamed answer (a file's bytes)
 * then waits in the runtime, which makes it only as it is read, and one
 * reader alone never fills the budget, however late it starts reading.
 *
 * Holding back the runtime for every lagging connection once the budget was
 * full, as the door did before, left the answers in the runtime instead:
 * their rooms lapsed there and the next were made, while the line of
 * requests behind them waited. Clients asking for 8 MiB each four times a
 * second and never reading grew `ferry serve` by 108 MiB and kept an honest
 * host waiting 21 s; taken off the runtime and cut, 92 MiB and 0.4 s
 * (bench:hostile-memory, unread alone).
 */
import { LIMITS } from "../../protocol/limits.ts";

/** Answer bytes held for peers, in all, before stale ones are cut: four objects/get answers. */
export const HELD_BYTES = 4 * LIMITS.maxGetBytes;
/**
 * Past the budget, the peers that have taken nothing for this long are cut,
 * longest first. A host that reads takes bytes within milliseconds (its
 * kernel takes them); eighty clients asking for 8 MiB each 20 ms apart and
 * never reading are cut a few at a time, and the door holds what came in
 * that while. Hosts retry a request whose connection was cut
 * (client/transport/retry.ts).
 */
export const STALE_MS = 250;
/** One connection's answers held before the runtime is read no further for it: one objects/get answer. */
export const CONNECTION_HELD_BYTES = LIMITS.maxGetBytes;
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

  /** Recounts what waits, and cuts the peers that took nothing for their stall limit, or too long past the budget. */
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
    if (this.total > this.budget) this.cutLagging(now, STALE_MS);
    // Past twice the budget, however recently they took: readers that each take a little every 200 ms
    // could otherwise hold a connection's share apiece.
    if (this.total > 2 * this.budget) this.cutLagging(now, 0);
    if (this.holding.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** Cuts the peers that have taken nothing for `forMs` or more, longest first, until the rest fit the budget. */
  private cutLagging(now: number, forMs: number): void {
    const stale = [...this.holding].filter(([, h]) => now - h.lastTaken >= forMs);
    for (const [holder, holding] of stale.sort(([, a], [, b]) => a.lastTaken - b.lastTaken)) {
      if (this.total <= this.budget) return;
      this.total -= holding.waiting;
      this.holding.delete(holder);
      holder.cut();
    }
  }
}
