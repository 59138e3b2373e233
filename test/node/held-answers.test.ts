/**
 * The front door's count of answers its peers have not taken
 * (client/serve/held-answers.ts), driven with peers whose take is set by
 * hand and a clock the test moves: what is held, who is cut and when.
 * serve-memory.test.ts and survive.test.ts try it against a real server.
 */
import { describe, expect, it } from "vitest";
import { HeldAnswers, type Holder, LOOK_EVERY_MS, STALE_MS, UNREAD_MS } from "../../client/serve/held-answers.ts";
import { fakeClock } from "./support/fake-clock.ts";

const MiB = 1024 * 1024;
/** A stall limit for the peers of these tests: a connection's own is a minute (front-door.ts STALL_MS). */
const STALL_MS = 1000;

/** A peer that has been sent `written` bytes and left `left` of them untaken. */
function peer(stallLimitMs = 60_000): Holder & { left: number; cuts: number; send(bytes: number): void } {
  return {
    written: 0,
    reads: false,
    left: 0,
    cuts: 0,
    waiting() {
      return this.left;
    },
    stallLimitMs: () => stallLimitMs,
    cut() {
      this.cuts++;
    },
    send(bytes: number) {
      this.written += bytes;
      this.left += bytes;
    },
  };
}

/** The clock the held answers read, and `pass` to move it with the timers. */
const { now, pass } = fakeClock();

describe("held answers", () => {
  it("count what peers have not taken, and forget a peer that has taken its bytes", () => {
    const held = new HeldAnswers(8 * MiB, now);
    const [a, b] = [peer(), peer()];
    a.send(5 * MiB);
    held.wrote(a, 5 * MiB);
    b.send(4 * MiB);
    held.wrote(b, 4 * MiB);
    expect(held.held).toBe(9 * MiB);
    a.left = 0;
    expect(held.forget(a)).toBe(5 * MiB);
    expect(held.held).toBe(4 * MiB);
  });

  it("counts nothing for a peer that took what it was sent at once", () => {
    const held = new HeldAnswers(8 * MiB, now);
    const a = peer();
    a.written += 10 * MiB;
    held.wrote(a, 10 * MiB);
    expect(held.held).toBe(0);
  });

  it("cuts a peer that takes nothing for its stall limit, and spares one that keeps taking", () => {
    const held = new HeldAnswers(8 * MiB, now);
    const [still, slow] = [peer(STALL_MS), peer(STALL_MS)];
    for (const p of [still, slow]) {
      p.send(4 * MiB);
      held.wrote(p, 4 * MiB);
    }
    for (let t = 0; t < STALL_MS * 3; t += LOOK_EVERY_MS) {
      slow.left -= 64 * 1024; // a slow reader: 64 KiB each look
      pass(LOOK_EVERY_MS);
    }
    expect(still.cuts).toBe(1);
    expect(slow.cuts).toBe(0);
    expect(held.held).toBe(slow.left);
  });

  it("past the budget, cuts the peers that took nothing for a while, longest first, until the rest fit", () => {
    const held = new HeldAnswers(8 * MiB, now);
    const [oldest, older, reading] = [peer(), peer(), peer()];
    for (const p of [oldest, older, reading]) {
      p.send(3 * MiB);
      held.wrote(p, 3 * MiB);
      pass(LOOK_EVERY_MS);
    }
    for (let t = 0; t < STALE_MS * 2; t += LOOK_EVERY_MS) {
      reading.left -= 4 * 1024; // a slow reader: 800 KiB in the test
      pass(LOOK_EVERY_MS);
    }
    // 9 MiB held past 8: the peer that has taken nothing longest goes, and that is enough.
    expect([oldest.cuts, older.cuts, reading.cuts]).toEqual([1, 0, 0]);
    expect(held.held).toBeLessThanOrEqual(8 * MiB);
  });

  it("past the budget, holds back readers, and cuts none that keeps taking, however slowly", () => {
    const held = new HeldAnswers(8 * MiB, now);
    // Readers of large files over slow links: each takes 64 KiB a second, together they hold 36 MiB.
    const readers = Array.from({ length: 9 }, () => peer());
    for (const p of readers) {
      p.send(4 * MiB);
      held.wrote(p, 4 * MiB);
    }
    // Not before a peer has taken anything: it may never read, and its answer would wait in the runtime.
    expect(readers.map((p) => held.holdsBack(p))).toEqual(Array(9).fill(false));
    for (let t = 0; t < STALE_MS * 4; t += LOOK_EVERY_MS) {
      if (t % 1000 === 0) for (const p of readers) p.left -= 64 * 1024;
      pass(LOOK_EVERY_MS);
    }
    expect(readers.map((p) => p.cuts)).toEqual(Array(9).fill(0));
    expect(readers.map((p) => held.holdsBack(p))).toEqual(Array(9).fill(true));
  });

  it("past the budget, cuts a peer that has taken nothing at all sooner than a reader", () => {
    const held = new HeldAnswers(8 * MiB, now);
    const [reader, silent] = [peer(), peer()];
    for (const p of [reader, silent]) {
      p.send(5 * MiB);
      held.wrote(p, 5 * MiB);
    }
    for (let t = 0; t < UNREAD_MS * 2; t += LOOK_EVERY_MS) {
      if (t === 0) reader.left -= 64 * 1024;
      pass(LOOK_EVERY_MS);
    }
    expect([reader.cuts, silent.cuts]).toEqual([0, 1]);
  });

  it("forgets a peer that caught up between looks", () => {
    const held = new HeldAnswers(8 * MiB, now);
    const a = peer(STALL_MS);
    a.send(4 * MiB);
    held.wrote(a, 4 * MiB);
    a.left = 0;
    pass(STALL_MS * 2);
    expect(a.cuts).toBe(0);
    expect(held.held).toBe(0);
  });

  it("past the budget, still holds back a reader that once caught up, rather than cut it as one that never read", () => {
    const held = new HeldAnswers(8 * MiB, now);
    const [reader, silent] = [peer(), peer()];
    reader.send(4 * MiB);
    held.wrote(reader, 4 * MiB);
    reader.left -= 64 * 1024;
    pass(LOOK_EVERY_MS);
    // It takes the rest, and the door lets go of it (front-door.ts caughtUp); its next answer waits.
    reader.left = 0;
    held.forget(reader);
    for (const p of [reader, silent]) {
      p.send(5 * MiB);
      held.wrote(p, 5 * MiB);
    }
    expect(held.holdsBack(reader)).toBe(true);
    pass(UNREAD_MS * 2);
    expect([reader.cuts, silent.cuts]).toEqual([0, 1]);
  });
});
