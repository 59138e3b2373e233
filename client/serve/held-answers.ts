/**
 * Answer bytes the front door (front-door.ts) has taken off the runtime and
 * its peers have not yet taken, across every connection of one `ferry serve`.
 *
 * The door reads what the runtime answers as it comes, whether or not the
 * peer reads: an answer waiting in the runtime keeps its room of the process
 * budget (worker/do/answer-room.ts), and the line of requests behind it
 * waits, so a few clients that never read would hold up every other host;
 * here it waits in one copy, counted. Past HELD_BYTES in all, the peers that
 * have taken nothing for STALE_MS are cut, longest first (UNREAD_MS for
 * those that have taken nothing at all), and a connection whose peer reads
 * and still has bytes waiting is read no further from the runtime until it
 * has taken them (holdsBack): a reader is slowed, and cut only if the door
 * sees it take nothing for STALE_MS. A peer that takes nothing for its
 * stall limit is cut whatever the total. One connection holds at most
 * CONNECTION_HELD_BYTES before the door stops reading the runtime for it: a
 * streamed answer (a file's bytes) then waits in the runtime, which makes
 * it only as it is read, and one reader alone never fills the budget,
 * however late it starts reading.
 *
 * Holding back every lagging connection once the budget was full, with
 * 8 MiB objects/get answers, left half of each answer of clients that never
 * read in the runtime: their rooms lapsed there and the next were made,
 * while the line of requests behind them waited (108 MiB, an honest host
 * waiting 21 s; bench:hostile-memory, unread alone). Answers of 4 MiB fit
 * the kernel's buffers, so such clients leave the door almost nothing, and
 * only peers seen reading are held back.
 */
import { LIMITS } from "../../protocol/limits.ts";

/**
 * Answer bytes held for peers, in all, before stale ones are cut: two objects/get answers (four let the door
 * grow by ~30 MiB under the whole mix, once the kernel, short of TCP memory, shrank every connection's buffers).
 */
export const HELD_BYTES = 2 * LIMITS.maxGetBytes;
/**
 * Past the budget, the peers that have taken nothing for this long are cut,
 * longest first. "Taken" is what the door can see: its own buffer for the
 * peer shrinking, which happens only once the kernel has room again, about
 * a third of its send buffer (up to 4 MiB on loopback) at a time: a reader
 * of 500 KB/s shows progress every ~3 s, one of 130 KB/s every ~10 s. At
 * 250 ms, five readers of a large file at 500 KB/s lost three to cuts, ten
 * at 2 MB/s seven (the tester, 2026-12-07); at 3 s, five at 500 KB/s one.
 * The door's own memory does not need the cut for readers (holdsBack reads
 * no further for one that lags); the runtime's does: what a held-back
 * answer has not passed on stays there. Hosts retry a request whose
 * connection was cut (client/transport/retry.ts).
 */
export const STALE_MS = 10_000;
/**
 * The same for a peer that has taken nothing since the door first held
 * bytes for it: clients that ask and never read, cut within a second,
 * while a reader of 2 MB/s shows its first progress within ~0.65 s.
 */
export const UNREAD_MS = 1000;
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
  /**
   * Whether its peer has been seen taking bytes the door held for it: a
   * reader, however slow. Kept with the connection, not its holding, which
   * ends each time the peer catches up: its next answer is a reader's too.
   */
  reads: boolean;
  /** How long the peer may take nothing while bytes wait before it is cut. */
  stallLimitMs(): number;
  /** Ends the connection, both sides. */
  cut(): void;
}

interface Holding {
  /** Bytes its peer had taken when last looked at, and when that last grew (or it was first held). */
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

  /**
   * Past the budget, a connection whose peer reads and has bytes waiting is
   * read no further until it takes them: its answer waits in the runtime,
   * which makes a streamed one only as it is read. Not one whose peer has
   * taken nothing yet: an objects/get answer made whole would wait there
   * with its room lapsed (answer-room.ts), and the next be made; held back
   * that way, clients that never read grew the runtime by ~400 MiB in 15 s
   * beside the rest of bench:hostile-memory's mix.
   */
  holdsBack(holder: Holder): boolean {
    return this.total > this.budget && holder.reads && this.holding.has(holder);
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
        holder.reads = true;
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

  /** Cuts the peers that have taken nothing for STALE_MS or more, longest first, until the rest fit the budget. */
  private cutStale(now: number): void {
    const stale = [...this.holding].filter(([p, h]) => now - h.lastTaken >= (p.reads ? STALE_MS : UNREAD_MS));
    for (const [holder, holding] of stale.sort(([, a], [, b]) => a.lastTaken - b.lastTaken)) {
      if (this.total <= this.budget) return;
      this.total -= holding.waiting;
      this.holding.delete(holder);
      holder.cut();
    }
  }
}
