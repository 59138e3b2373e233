/**
 * The bytes of WebSocket frames in transit to the runtime, across every
 * connection of one `ferry serve` (front-door.ts, inbound.ts). workerd
 * reads each frame whole, up to 32 MiB, before the Worker sees it, and
 * holds what it has of a frame for as long as the rest may come: before
 * this budget, eight sockets that each sent 15 MiB of a 16 MiB frame and
 * stopped held 134 MiB of the runtime for good, and sixteen sending 16 MiB
 * frames one after another grew it by 258 MiB. A frame of FRAME_FREE_BYTES
 * or more takes its size (at most the whole budget) before its first byte
 * passes and gives it back after its last; a frame that finds the budget
 * taken waits, first come first served, its connection unread meanwhile.
 */
import { LIMITS } from "../../protocol/limits.ts";
import { Line } from "./line.ts";

/** The budget: two full frames (protocol/limits.ts maxBodyBytes, 8 MiB; 16 MiB, at 32 MiB, until 2026-12-07). */
export const FRAMES_IN_TRANSIT_BYTES = 2 * LIMITS.maxBodyBytes;
/** Frames smaller than this pass without taking any: hellos, probes, acks and small pushes never wait. */
export const FRAME_FREE_BYTES = 64 * 1024;

export class FrameBudget extends Line {
  constructor(capacity = FRAMES_IN_TRANSIT_BYTES) {
    super(capacity);
  }

  /** What a frame of `size` bytes takes: 0 for a small one, never more than the whole budget. */
  share(size: number): number {
    return size < FRAME_FREE_BYTES ? 0 : Math.min(size, this.capacity);
  }
}
