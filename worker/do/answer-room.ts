/**
 * What an HTTP answer holds of the process budget (inflight.ts) until it is
 * sent, reserved with its request's body before anything is read. A
 * request's body may be a few bytes and its answer 4 MiB (8 then): a hundred
 * objects/get sent 10 ms apart were a hundred answers made at once, and
 * grew workerd by ~1 GiB (issue 28), read or not. Reserved, they are made a
 * few at a time and the rest wait in line; sent, an answer is the front
 * door's to hold (client/serve/held-answers.ts). A socket's answers have
 * their own share (answer-share.ts).
 */
import type { ProtocolError } from "../../protocol/errors.ts";
import { LIMITS } from "../../protocol/limits.ts";
import type { OpName } from "../../protocol/ops.ts";
import { MAX_PAGE_BYTES } from "../sync/changes.ts";
import { InflightBudget } from "./inflight.ts";
import type { Lease } from "./leases.ts";
import { letGoOf } from "./reclaim.ts";

/** The room for `op`'s answer: the most it holds, for the ops whose answers are large; small ones fit the budget's rooms. */
export function httpAnswerRoom(op: OpName): number {
  switch (op) {
    case "getObjects":
      return LIMITS.maxGetBytes;
    case "changes":
    case "snapshot":
      return MAX_PAGE_BYTES;
    default:
      return 0;
  }
}

/**
 * Large HTTP answers (objects/get, changes, snapshot: httpAnswerRoom) made
 * and being sent at once, across the process. Their rooms count in the
 * process budget too, but that budget has room for ten of them, and each
 * answer in the making holds the runtime's copies of its bytes as well
 * (what R2 read, the encoded answer, the pieces written): clients that
 * asked for 4 MiB a quarter second apart and never read grew workerd by
 * 40 MiB alone and by ~45 MiB more beside the other attacks, ten answers
 * being made at a time (bench:hostile-memory). Two at a time, they wait
 * here in line, as bodies wait for the process budget.
 */
export const ANSWERS_AT_ONCE = 2;
export const ANSWER_BUDGET = new InflightBudget(ANSWERS_AT_ONCE * LIMITS.maxGetBytes, null, "the server", 0, false);

/**
 * Large request bodies (half a full one or more: uploads, pushes carrying
 * objects) read and stored at once, across the process, as large answers
 * are made. The process budget holds four full bodies, so that one host's
 * two uploads in flight fit beside the weightiest push it sends (a push of
 * 10,000 files decodes to some 14 MB, inflight.ts); four bodies stored at
 * once, each leaving the runtime's copies of its bytes (the body, the
 * Worker's, the bucket's put and its pieces), grew workerd by 108-121 MiB
 * under sixteen clients uploading full bodies, two by ~80
 * (bench:hostile-memory, bigbodies). A large body takes its place in this
 * line before the process budget, and keeps it until its call ends.
 */
export const BODIES_AT_ONCE = 2;
export const LARGE_BODY_BYTES = LIMITS.maxBodyBytes / 2;
export const BODY_BUDGET = new InflightBudget(BODIES_AT_ONCE * LIMITS.maxBodyBytes, null, "the server", 0, false);

/** What a body of `bytes` (declared, or the most it may be) takes in the bodies' line: all of it when large, else 0. */
export function bodyLineShare(bytes: number): number {
  return bytes >= LARGE_BODY_BYTES ? bytes : 0;
}

/** What a request of `op` with a `body`-byte body reserves besides it: its answer's room and bodies' line place. */
export function roomsFor(op: OpName, body: number): { room: number; line: number } {
  return { room: httpAnswerRoom(op), line: bodyLineShare(body) };
}

/**
 * What a request holds so far, set by admitWithRoom as each part is granted:
 * its bodies' line place, its answers' line room and its bytes of the budget.
 */
export interface Granted {
  line: number;
  answer: number;
  budget: number;
}

/**
 * Reserves `body` bytes of `budget` and `room` for the answer in both, for
 * a request of workspace `from`: first `line` in the bodies' line
 * (bodyLineShare) and the room in the answers' line (ANSWER_BUDGET). Null
 * once all are held, else the refusal, with nothing held. `granted` says
 * what is held at each moment.
 */
export async function admitWithRoom(
  budget: InflightBudget,
  body: number,
  room: number,
  from: string,
  line = 0,
  granted: Granted = { line: 0, answer: 0, budget: 0 },
): Promise<ProtocolError | null> {
  const steps: [InflightBudget, number, keyof Granted][] = [
    [BODY_BUDGET, line, "line"],
    [ANSWER_BUDGET, room, "answer"],
    [budget, body + room, "budget"],
  ];
  for (const [taken, bytes, part] of steps) {
    const busy = bytes > 0 ? await taken.admit(bytes, from) : null;
    if (busy === null) {
      granted[part] = bytes;
      continue;
    }
    giveBack(budget, granted);
    return busy;
  }
  return null;
}

/** Gives back all `granted` holds of `budget` and the lines (admitWithRoom), once: each part is zeroed. */
export function giveBack(budget: InflightBudget, granted: Granted): void {
  budget.release(granted.budget);
  ANSWER_BUDGET.release(granted.answer);
  BODY_BUDGET.release(granted.line);
  granted.line = 0;
  granted.answer = 0;
  granted.budget = 0;
}

/** Gives back what admitWithRoom reserved (or what is left of it). */
export function releaseWithRoom(budget: InflightBudget, body: number, room: number, line = 0): void {
  budget.release(body + room);
  if (room > 0) ANSWER_BUDGET.release(room);
  if (line > 0) BODY_BUDGET.release(line);
}

/** What an answer's room, kept past its call as a lease, goes back to: `budget` and the answers' line. */
export function roomIn(budget: InflightBudget): { release(bytes: number): void } {
  return { release: (bytes) => releaseWithRoom(budget, 0, bytes) };
}

/** The pieces an answer is handed out in: the runtime takes the next once it has written the last. */
const PIECE_BYTES = 1024 * 1024;
/**
 * How long an answer keeps its room after its reader last took a piece. The
 * runtime drops a request's pending work, this body's included, when its
 * client goes, without a word to it: a room is only ever given back by its
 * answer being taken to its end, or by lapsing. Three seconds let eighty
 * clients that never read hold the line of requests so long that a reader
 * was refused. The front door takes such clients' answers off the runtime
 * and cuts them (client/serve/held-answers.ts); it holds back only a peer
 * it has seen read. A reader slower than the lease has its answer sent all
 * the same, only no longer counted.
 */
export const ANSWER_LEASE_MS = 1000;

/**
 * A body for `bytes`, of their length, that keeps `lease` (the answer's
 * room, leases.ts) while its reader takes its pieces and ends it, with
 * `letGoOf` (its bytes are garbage), once the last is taken or the reader
 * goes: another answer is made only as one goes out. A FixedLengthStream
 * passes each piece on only as its reader takes it, and keeps the answer's
 * Content-Length. Handed over whole, a hundred answers waited in the
 * runtime's buffers at once and grew workerd by ~700 MiB, read or not; its
 * allocator kept the pages after.
 */
export function sentBody(bytes: Uint8Array, lease: Lease): ReadableStream<Uint8Array> {
  const { readable, writable } = new FixedLengthStream(bytes.byteLength);
  const writer = writable.getWriter();
  (async () => {
    for (let at = 0; at < bytes.byteLength; at += PIECE_BYTES) {
      await writer.write(bytes.subarray(at, at + PIECE_BYTES));
      lease.renew();
    }
    await writer.close();
  })()
    .catch(() => {}) // the reader went: nothing more to send
    .finally(() => {
      letGoOf(bytes.byteLength);
      lease.end();
    });
  return readable;
}
