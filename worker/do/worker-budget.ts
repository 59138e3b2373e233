/**
 * The process budget (inflight.ts) for the bodies the Worker reads itself,
 * the R2 routes (worker/r2/), as the object's serve counts its own
 * (workspace.ts): the body's declared bytes, then what decoding it holds,
 * and the room its answer holds until sent (answer-room.ts).
 */
import { ProtocolError } from "../../protocol/errors.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { ANSWER_LEASE_MS, admitWithRoom, bodyLineShare, releaseWithRoom, roomIn } from "./answer-room.ts";
import { decodedWeight, PROCESS_BUDGET } from "./inflight.ts";
import { type Lease, leaseHeld } from "./leases.ts";

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
  let held = declared ?? LIMITS.maxBodyBytes;
  let room = answer;
  let line = bodyLineShare(held);
  const busy = await admitWithRoom(PROCESS_BUDGET, held, room, from, line);
  if (busy !== null) throw busy;
  const handOver = () => {
    releaseWithRoom(PROCESS_BUDGET, held, room, line);
    held = 0;
    room = 0;
    line = 0;
  };
  const read = (bytes: Uint8Array) => {
    PROCESS_BUDGET.release(held - bytes.byteLength);
    held = bytes.byteLength;
    const weight = decodedWeight(bytes);
    if (weight instanceof ProtocolError) throw weight;
    const full = PROCESS_BUDGET.grow(held + room, weight);
    if (full !== null) throw full;
    held += weight;
  };
  const keepAnswer = () => {
    const kept = room;
    room = 0;
    return leaseHeld(roomIn(PROCESS_BUDGET), kept, ANSWER_LEASE_MS);
  };
  try {
    return await run({ read, handOver, keepAnswer });
  } finally {
    handOver();
  }
}
