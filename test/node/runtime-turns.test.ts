/**
 * The front door's turns (client/serve/runtime-turns.ts): how many large
 * requests the runtime works on at once, and when a turn comes back, which
 * is when the head of its answer does (client/serve/outbound.ts). Driven by
 * hand, with a clock the test moves; serve-memory.test.ts tries them
 * against a real server.
 */
import { describe, expect, it } from "vitest";
import { busyAnswer } from "../../client/serve/door-refusal.ts";
import { Line } from "../../client/serve/line.ts";
import { Outbound } from "../../client/serve/outbound.ts";
import {
  MAX_WAITING_TURNS,
  RUNTIME_TURNS,
  TURN_MAX_MS,
  TURN_MIN_BYTES,
  TURN_PACE_MS,
  TURN_WAIT_MS,
  Turn,
} from "../../client/serve/runtime-turns.ts";
import { decodeCbor } from "../../protocol/cbor.ts";
import { decodeWireError } from "../../protocol/errors.ts";
import { fakeClock } from "./support/fake-clock.ts";

describe("answers followed", () => {
  /** The answer heads `Outbound` sees in `bytes`, fed in pieces of `piece` bytes, for requests of `methods`. */
  function heads(bytes: string, methods: string[], piece = bytes.length): number {
    let seen = 0;
    const outbound = new Outbound(() => seen++);
    for (const m of methods) outbound.asked(m);
    const all = Buffer.from(bytes, "latin1");
    for (let at = 0; at < all.length; at += piece) outbound.push(all.subarray(at, at + piece));
    return seen;
  }

  const sized = "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHTTP/1.1 200";
  const chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nc\r\nHTTP/1.1 200\r\n0\r\n\r\n";

  it("finds each answer's head past bodies of a length and of chunks that look like heads, a byte at a time too", () => {
    const text = `${sized}${chunked}HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n`;
    expect(heads(text, ["POST", "POST", "GET"])).toBe(3);
    expect(heads(text, ["POST", "POST", "GET"], 1)).toBe(3);
  });

  it("counts no body for a HEAD, a 204 or a 304, and no interim answer as one", () => {
    const head = "HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n";
    const interim = "HTTP/1.1 100 Continue\r\n\r\n";
    const noContent = "HTTP/1.1 204 No Content\r\nContent-Length: 99\r\n\r\n";
    expect(heads(`${head}${interim}${noContent}${head}`, ["HEAD", "POST", "GET"])).toBe(3);
  });

  it("follows nothing after a 101 or an answer without a length", () => {
    expect(heads("HTTP/1.1 101 Switching Protocols\r\n\r\nHTTP/1.1 200 OK\r\n\r\n", ["GET", "GET"])).toBe(1);
    expect(heads("HTTP/1.1 200 OK\r\n\r\nHTTP/1.1 200 OK\r\n\r\n", ["GET", "GET"])).toBe(1);
  });
});

describe("turns", () => {
  const { now, pass } = fakeClock();

  /** A connection whose peer sends a large body (`sending`) and has been idle for `idle` ms. */
  function connection(line: Line) {
    const state = { sending: false, bytes: 0, held: false, heldAt: 0, cuts: 0, refusals: 0, granted: 0 };
    const turn = new Turn(
      line,
      {
        sending: () => state.sending,
        // The door reads it the whole time, unless `held` (the runtime is not taking its bytes).
        pace: () => ({ bytes: state.bytes, ms: state.held ? state.heldAt : now() }),
        cut: () => state.cuts++,
        refuse: () => state.refusals++,
      },
      now,
    );
    const ask = () => turn.need(() => state.granted++);
    return { turn, state, ask };
  }

  it("lets RUNTIME_TURNS connections in at once, and the next once one is answered", () => {
    const line = new Line(RUNTIME_TURNS);
    const all = Array.from({ length: RUNTIME_TURNS + 1 }, () => connection(line));
    expect(all.map((c) => c.ask())).toEqual([...Array(RUNTIME_TURNS).fill(true), false]);
    for (const c of all.slice(0, RUNTIME_TURNS)) c.turn.asked();
    (all[0] as ReturnType<typeof connection>).turn.answered();
    expect((all[RUNTIME_TURNS] as ReturnType<typeof connection>).state.granted).toBe(1);
  });

  it("keeps a turn while a request's body comes, and while it waits for its answer, up to TURN_MAX_MS", () => {
    const line = new Line(1);
    const [a, b] = [connection(line), connection(line)];
    a.ask();
    a.turn.asked();
    a.state.sending = true;
    pass(TURN_MAX_MS * 2);
    b.ask();
    pass(1000);
    expect(b.state.granted).toBe(0);
    a.state.sending = false;
    pass(TURN_MAX_MS - 200);
    expect(b.state.granted).toBe(0);
    pass(400);
    expect([b.state.granted, b.state.refusals]).toEqual([1, 0]);
  });

  it("cuts a connection whose body stops or trickles while others wait, and not while none does", () => {
    const line = new Line(1);
    const [a, b] = [connection(line), connection(line)];
    a.ask();
    a.turn.asked();
    a.state.sending = true;
    pass(TURN_PACE_MS * 3);
    expect(a.state.cuts).toBe(0);
    b.ask();
    // A trickle: a byte every half second, short of TURN_MIN_BYTES a second.
    for (let t = 0; t < TURN_PACE_MS * 2; t += 500) {
      a.state.bytes += 1;
      pass(500);
    }
    expect(a.state.cuts).toBeGreaterThan(0);
    a.turn.close();
    expect(b.state.granted).toBe(1);
  });

  it("spares a body that comes faster than TURN_MIN_BYTES a second, or waits on the runtime rather than its peer", () => {
    const line = new Line(1);
    const [a, b] = [connection(line), connection(line)];
    a.ask();
    a.turn.asked();
    a.state.sending = true;
    b.ask();
    for (let t = 0; t < TURN_PACE_MS * 4; t += 100) {
      a.state.bytes += TURN_MIN_BYTES / 8;
      pass(100);
    }
    // The runtime takes nothing for a while (the Worker's line): the door does not read the peer, whose pace stands still.
    Object.assign(a.state, { held: true, heldAt: now() });
    pass(TURN_PACE_MS * 3);
    expect([a.state.cuts, b.state.granted]).toEqual([0, 0]);
  });

  it("gives the turn of a connection that ends, or of one that ends waiting, to the next", () => {
    const line = new Line(1);
    const [a, b, c] = [connection(line), connection(line), connection(line)];
    a.ask();
    b.ask();
    c.ask();
    b.turn.close();
    a.turn.close();
    expect([b.state.granted, c.state.granted]).toEqual([0, 1]);
  });

  it("refuses a request that waited TURN_WAIT_MS for its turn, and one past MAX_WAITING_TURNS at once", () => {
    const line = new Line(1);
    const [holder, patient] = [connection(line), connection(line)];
    holder.ask();
    holder.turn.asked();
    holder.state.sending = true; // its body comes steadily: it keeps its turn
    patient.ask();
    pass(TURN_WAIT_MS - 100);
    expect(patient.state.refusals).toBe(0);
    pass(200);
    expect([patient.state.refusals, patient.state.cuts]).toEqual([1, 0]);
    // Its place is given up: the next in line gets the turn when the holder is answered.
    const next = connection(line);
    next.ask();
    holder.state.sending = false;
    holder.turn.answered();
    expect(next.state.granted).toBe(1);
    const waiting = Array.from({ length: MAX_WAITING_TURNS }, () => connection(line));
    for (const c of waiting) c.ask();
    const late = connection(line);
    expect(late.ask()).toBe(false);
    expect(late.state.refusals).toBe(1);
  });
});

describe("the door's refusal", () => {
  it("is a 429 rate_limited with retryAfterMs, in CBOR for an operation and JSON for the rest, then a close", () => {
    const cbor = busyAnswer("POST /v1/workspaces/w/objects HTTP/1.1\r\nHost: x\r\n\r\n");
    const headEnd = cbor.indexOf("\r\n\r\n") + 4;
    const head = cbor.subarray(0, headEnd).toString("latin1");
    expect(head).toMatch(/^HTTP\/1\.1 429 /);
    expect(head).toMatch(/\r\nConnection: close\r\n/);
    expect(head).toMatch(/\r\nRetry-After: 1\r\n/);
    expect(Number(/Content-Length: (\d+)/.exec(head)?.[1])).toBe(cbor.length - headEnd);
    const refusal = decodeWireError(decodeCbor(cbor.subarray(headEnd)));
    expect([refusal?.code, refusal?.details.retryAfterMs]).toEqual(["rate_limited", 1000]);
    const json = busyAnswer("POST /v1/workspaces/w/gc HTTP/1.1\r\n\r\n");
    expect(JSON.parse(json.subarray(json.indexOf("\r\n\r\n") + 4).toString()).error.code).toBe("rate_limited");
  });
});
