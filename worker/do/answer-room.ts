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
import { LIMITS } from "../../protocol/limits.ts";
import type { OpName } from "../../protocol/ops.ts";
import { MAX_PAGE_BYTES } from "../sync/changes.ts";
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
