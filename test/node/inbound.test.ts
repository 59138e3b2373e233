/**
 * The front door's follower (client/serve/inbound.ts) on its own: what it
 * passes on of a peer's bytes, and when it stops reading, with no runtime
 * (a tester's, adapted). workerd (kj-http) ends a head's lines at a bare LF
 * as at CRLF, and the head at the first empty line: `\n\n` and `\r\n\n` end
 * it as `\r\n\r\n` does, and the follower reads heads the same way.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { FrameBudget } from "../../client/serve/frame-budget.ts";
import { Inbound } from "../../client/serve/inbound.ts";
import { HeadBudget, HeadReader } from "../../client/serve/request-head.ts";
import { Turns } from "../../client/serve/runtime-turns.ts";
import { maskedFrame, maskedHeader } from "./support/client-frames.ts";

function follower(budget = new FrameBudget(), turns = new Turns()) {
  const forwarded: Buffer[] = [];
  const seen = { held: false, cut: false };
  const inbound = new Inbound(
    {
      forward: (bytes) => forwarded.push(Buffer.from(bytes)),
      cut: () => {
        seen.cut = true;
      },
      hold: (on) => {
        seen.held = on;
      },
      asked: () => {},
      pace: () => ({ bytes: 0, ms: 0 }),
      refuse: () => {},
    },
    { frames: budget, turns, heads: new HeadBudget() },
  );
  const passed = () => Buffer.concat(forwarded).toString("latin1");
  return { inbound, seen, passed };
}

const upgrade = (eol: string) =>
  [
    "GET /v1/workspaces/w/sync HTTP/1.1",
    "Host: x",
    "Upgrade: websocket",
    "Connection: Upgrade",
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    "Sec-WebSocket-Version: 13",
    "",
    "",
  ].join(eol);

/** A masked ping (key of zeros) whose payload, read as a head's lines, says Content-Length. */
function smugglingPing(): Buffer {
  return maskedFrame(Buffer.from("\r\nContent-Length: 999999999999999\r\n\r\n", "latin1"), 0x89);
}

describe("the front door's follower", () => {
  for (const [name, eol] of [
    ["LF", "\n"],
    ["CRLF, then a bare LF", "\r\n"],
  ] as const) {
    it(`ends a head where the runtime does (${name}), and follows the frames after its 101`, () => {
      const budget = new FrameBudget();
      const { inbound, seen, passed } = follower(budget);
      const head = eol === "\n" ? upgrade("\n") : `${upgrade("\r\n").slice(0, -2)}\n`;
      inbound.push(Buffer.from(head, "latin1"));
      expect(seen.held, "awaiting the upgrade's answer").toBe(true);
      inbound.answered(Buffer.from("HTTP/1.1 101 Switching Protocols\r\n\r\n"));
      expect(inbound.websocket).toBe(true);
      // A ping whose payload reads as head lines is a frame like any other; the large frame takes the budget.
      inbound.push(smugglingPing());
      inbound.push(maskedHeader(30 * 1024 * 1024));
      expect(passed()).toBe(
        Buffer.concat([Buffer.from(head, "latin1"), smugglingPing(), maskedHeader(30 * 1024 * 1024)]).toString(
          "latin1",
        ),
      );
      expect(
        budget.take(4 * 1024 * 1024, () => undefined),
        "the budget is the frame's",
      ).toBe(false);
    });
  }

  it("finds a head's end sent a byte at a time, LF CR LF split across pushes", () => {
    const { inbound, seen, passed } = follower();
    const head = "GET /a HTTP/1.1\r\nHost: x\n\r\n";
    for (const byte of Buffer.from(head, "latin1")) inbound.push(Buffer.from([byte]));
    inbound.push(Buffer.from("POST /b HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"));
    expect(passed()).toBe(`${head}POST /b HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc`);
    expect(seen.held).toBe(false);
    // The next request starts after the body: an upgrade there is not the first, and is cut.
    inbound.push(Buffer.from(upgrade("\r\n")));
    expect(seen.cut).toBe(true);
  });

  it("reads a field on a bare-LF line of a CRLF head as the runtime does: its body is followed", () => {
    const { inbound, seen } = follower();
    const head = "POST /a HTTP/1.1\r\nHost: x\nContent-Length: 10\r\n\r\n";
    inbound.push(Buffer.from(`${head}0123456789`, "latin1"));
    // Had the body been taken for the next head, this upgrade would pass as part of it; it is cut.
    inbound.push(Buffer.from(upgrade("\r\n")));
    expect(seen.cut).toBe(true);
  });

  it("still follows CRLF requests, their bodies and the next request, pipelined", () => {
    const { inbound, seen, passed } = follower();
    const text =
      "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" +
      "POST /b HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nT: 1\r\n\r\n" +
      "GET /c HTTP/1.1\r\n\r\n";
    for (const byte of Buffer.from(text, "latin1")) inbound.push(Buffer.from([byte]));
    expect(passed()).toBe(text);
    expect(seen.held).toBe(false);
    // An upgrade now is not the connection's first request: cut.
    inbound.push(Buffer.from(upgrade("\r\n")));
    expect(seen.cut).toBe(true);
  });

  it("forwards what one push brings in one write, not cut at each line and chunk it follows", () => {
    const writes: number[] = [];
    const inbound = new Inbound(
      {
        forward: (b) => writes.push(b.length),
        cut: () => {},
        hold: () => {},
        asked: () => {},
        pace: () => ({ bytes: 0, ms: 0 }),
        refuse: () => {},
      },
      { frames: new FrameBudget(), turns: new Turns(), heads: new HeadBudget() },
    );
    const text = "POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nGET /b HTTP/1.1\r\n\r\n";
    inbound.push(Buffer.from(text, "latin1"));
    expect(writes).toEqual([text.length]);
  });

  describe("a fragmented message", () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    /** A follower past a CRLF upgrade its runtime accepted, on `budget`. */
    function upgraded(budget: FrameBudget) {
      const f = follower(budget);
      f.inbound.push(Buffer.from(upgrade("\r\n")));
      f.inbound.answered(Buffer.from("HTTP/1.1 101 Switching Protocols\r\n\r\n"));
      return f;
    }

    /** A masked data frame (key of zeros) of `length` bytes: opcode 2 or a continuation (0), final or not. */
    function fragment(length: number, opcode: 0 | 2, final: boolean): Buffer {
      return maskedFrame(Buffer.alloc(length, 0x41), (final ? 0x80 : 0) | opcode);
    }

    const SMALL = 65_535; // each fragment under FRAME_FREE_BYTES

    it("counts its fragments together: past the free size they wait for the budget like one large frame", () => {
      const budget = new FrameBudget();
      const a = upgraded(budget);
      const b = upgraded(budget);
      const before = a.passed().length;
      // a: a message of many small fragments, its final one never sent, holding the budget.
      a.inbound.push(Buffer.concat([fragment(SMALL, 2, false), fragment(SMALL, 0, false), fragment(SMALL, 0, false)]));
      expect(a.passed().length - before).toBe(3 * (SMALL + 8));
      // b: the same, from its second fragment on, waits: nothing of it passes.
      const bBefore = b.passed().length;
      b.inbound.push(Buffer.concat([fragment(SMALL, 2, false), fragment(SMALL, 0, false), fragment(SMALL, 0, true)]));
      expect(b.passed().length - bBefore).toBe(SMALL + 8);
      expect(b.seen.held).toBe(true);
      // a's message ends: b's turn.
      a.inbound.push(fragment(10, 0, true));
      expect(b.seen.held).toBe(false);
      expect(b.passed().length - bBefore).toBe(3 * (SMALL + 8));
    });

    it("is cut when its fragments stop coming, and gives the budget back", () => {
      vi.useFakeTimers();
      const budget = new FrameBudget();
      const a = upgraded(budget);
      a.inbound.push(Buffer.concat([fragment(SMALL, 2, false), fragment(SMALL, 0, false)]));
      // A ping between fragments keeps the message's share and its deadline.
      a.inbound.push(maskedFrame(Buffer.alloc(0), 0x89));
      vi.advanceTimersByTime(60_000);
      expect(a.seen.cut).toBe(true);
      a.inbound.close();
      const b = upgraded(budget);
      const bBefore = b.passed().length;
      // A whole frame past the free size (its header in the 64-bit form) passes at once.
      const whole = fragment(SMALL + 1, 2, true);
      b.inbound.push(whole);
      expect(b.passed().length - bBefore).toBe(whole.length);
    });

    it("passes small fragmented messages without taking any budget", () => {
      const budget = new FrameBudget(1); // no room for any large frame
      const a = upgraded(budget);
      const before = a.passed().length;
      a.inbound.push(Buffer.concat([fragment(1000, 2, false), fragment(1000, 0, false), fragment(1000, 0, true)]));
      a.inbound.push(Buffer.concat([fragment(1000, 2, false), fragment(1000, 0, true)]));
      expect(a.passed().length - before).toBe(5 * (1000 + 8));
      expect(a.seen.held).toBe(false);
    });
  });
});

describe("unfinished heads", () => {
  it("past the door's budget, cut the connection holding the largest, and no other", () => {
    const heads = new HeadBudget(100_000);
    const cuts: string[] = [];
    const big = new HeadReader(heads, () => cuts.push("big"));
    const small = new HeadReader(heads, () => cuts.push("small"));
    small.read(Buffer.from("GET / HTTP/1.1\r\nHost: x\r\n"));
    // Its connection ends at the cut, and is read no more (inbound.ts close).
    for (let i = 0; i < 20 && !cuts.includes("big"); i++) big.read(Buffer.alloc(10_000, 0x61));
    expect(cuts).toEqual(["big"]);
    // A head that ends gives its bytes back.
    expect(small.read(Buffer.from("\r\n")).whole).toBe(true);
    small.take();
    const next = new HeadReader(heads, () => cuts.push("next"));
    next.read(Buffer.alloc(60_000, 0x61));
    expect(cuts).toEqual(["big"]);
  });
});
