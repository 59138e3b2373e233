/**
 * The process budget (inflight.ts) for the bodies the Worker reads itself,
 * the R2 routes (worker/r2/), as the object's serve counts its own
 * (workspace.ts): the body's declared bytes, then what decoding it holds,
 * and the room its answer holds until sent (answer-room.ts).
 */
import { ProtocolError } from "../../protocol/errors.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { ANSWER_LEASE_MS, admitWithRoom, bodyLineShare, type Granted, giveBack, roomIn } from "./answer-room.ts";
import { decodedWeight, PROCESS_BUDGET } from "./inflight.ts";
import { type Lease, leaseHeld } from "./leases.ts";

/** How long a call's reservation outlives its last renewal (withinBudget): it is renewed five times a term. */
const RESERVATION_TERM_MS = 1000;

/** Bytes the Worker holds of the process budget for one body it reads itself (withinBudget). */
export interface Reservation {
  /**
   * The body is read, `bytes` long: holds that (not what it declared) and
   * what decoding it will hold, or throws the refusal.
   */
  read(bytes: Uint8Array): void;
  /** Gives the bytes back early: the body goes to the object, which counts it again in its own serve. */
  handOver(): void;
  /** Keeps the answer's room past the call, as a lease (answer-room.ts sentBody). */
  keepAnswer(): Lease;
}

/**
 * Runs `run` with `declared` bytes (the most a body may be, when it declared
 * none) and `answer` bytes of room for its answer reserved of the process
 * budget, waiting in line for them (admit) as a request of the workspace
 * whose object is `from`, or throws the refusal.
 */
export async function withinBudget<T>(
  declared: number | undefined,
  answer: number,
  from: string,
  run: (reservation: Reservation) => Promise<T>,
): Promise<T> {
  const body = declared ?? LIMITS.maxBodyBytes;
  const granted: Granted = { line: 0, answer: 0, budget: 0 };
  let done = false;
  const handOver = () => {
    done = true;
    giveBack(PROCESS_BUDGET, granted);
  };
  // What is held is a lease this call renews while it runs: if the runtime drops the request (its client went,
  // or the front door cut it), nothing after its pending await runs, not even its body's deadline, and the
  // lease lapses instead: two uploads cut while they trickled held the bodies' line for good, and an honest
  // push behind them failed after 106 s (5.3 s now).
  const alive = leaseHeld({ release: handOver }, 1, RESERVATION_TERM_MS);
  const beat = setInterval(() => alive.renew(), RESERVATION_TERM_MS / 5);
  try {
    const busy = await admitWithRoom(PROCESS_BUDGET, body, answer, from, bodyLineShare(body), granted);
    if (busy !== null) throw busy;
    const read = (bytes: Uint8Array) => {
      const weight = decodedWeight(bytes);
      if (weight instanceof ProtocolError) throw weight;
      if (done) return; // lapsed or handed over: nothing of the budget to move
      // Its bytes (less than declared, when it declared none) and what decoding them holds.
      PROCESS_BUDGET.release(granted.budget - granted.answer - bytes.byteLength);
      granted.budget = bytes.byteLength + granted.answer;
      const full = PROCESS_BUDGET.grow(granted.budget, weight);
      if (full !== null) throw full;
      granted.budget += weight;
    };
    const keepAnswer = () => {
      const kept = done ? 0 : granted.answer;
      granted.budget -= kept;
      granted.answer = 0;
      return leaseHeld(roomIn(PROCESS_BUDGET), kept, ANSWER_LEASE_MS);
    };
    return await run({ read, handOver, keepAnswer });
  } finally {
    clearInterval(beat);
    alive.end();
    // Again, for what was granted after a lapse (a call slow to renew, not dropped): giveBack zeroes what it gives.
    giveBack(PROCESS_BUDGET, granted);
  }
}
