/**
 * Where a WebSocket's large frames wait before they pass the front door
 * (inbound.ts): the frames' budget of bytes in transit (frame-budget.ts),
 * then a turn of the runtime (runtime-turns.ts), and a deadline to arrive
 * whole. The runtime holds a fragmented message's frames until its final
 * one: they count as one, free while under FRAME_FREE_BYTES together, and
 * past it taking the whole budget (its size is not known yet) until the
 * message ends, within one deadline for the whole budget.
 */
import { FRAME_FREE_BYTES, type FrameBudget } from "./frame-budget.ts";
import type { Turn } from "./runtime-turns.ts";

/** A large frame must arrive within this, plus FRAME_MS_PER_MIB for each MiB: as a body must (README). */
const FRAME_BASE_MS = 10_000;
const FRAME_MS_PER_MIB = 1000;

/** What a frame's header says (RFC 6455 §5.2). */
export interface FrameHeader {
  readonly headerBytes: number;
  readonly length: number;
  readonly final: boolean;
  readonly control: boolean;
}

/** The header at the start of `bytes`; null until all of it has come, "bad" for a length past 2^53. */
export function frameHeader(bytes: Buffer): FrameHeader | null | "bad" {
  if (bytes.length < 2) return null;
  const short = (bytes[1] as number) & 0x7f;
  const lengthBytes = short === 126 ? 2 : short === 127 ? 8 : 0;
  const headerBytes = 2 + lengthBytes + ((bytes[1] as number) & 0x80 ? 4 : 0);
  if (bytes.length < headerBytes) return null;
  const length = short === 126 ? bytes.readUInt16BE(2) : short === 127 ? Number(bytes.readBigUInt64BE(2)) : short;
  if (!Number.isSafeInteger(length)) return "bad";
  const control = ((bytes[0] as number) & 0x08) !== 0;
  const final = ((bytes[0] as number) & 0x80) !== 0;
  return { headerBytes, length, final, control };
}

export class FrameGate {
  /** The budget this connection's frame in transit holds, and the grant it waits on. */
  private taken = 0;
  private waitingFor: (() => void) | undefined;
  private deadline: NodeJS.Timeout | undefined;
  /** The bytes so far of a fragmented message in transit (its frames before the final one), or undefined. */
  private message: number | undefined;

  /** `resume` follows the connection again once what it waited for is granted; `cut` ends it. */
  constructor(
    private readonly budget: FrameBudget,
    private readonly turn: Turn,
    private readonly resume: () => void,
    private readonly cut: () => void,
  ) {}

  /** Whether a large frame (or message) is in transit: it holds budget, and its bytes need a turn. */
  get holds(): boolean {
    return this.taken > 0;
  }

  /** Whether the frame after `header` may pass now (else `resume` comes once it may), and whether it ends a message. */
  admit(header: FrameHeader): { endsMessage: boolean } | null {
    const fragment = !header.control && (this.message !== undefined || !header.final);
    const counted = fragment ? (this.message ?? 0) + header.length : header.length;
    const share = fragment ? (counted < FRAME_FREE_BYTES ? 0 : this.budget.capacity) : this.budget.share(header.length);
    if (share > 0 && this.taken === 0) {
      const grant = () => {
        this.waitingFor = undefined;
        this.taken = share;
        this.resume();
      };
      if (!this.budget.take(share, grant)) {
        this.waitingFor = grant;
        return null;
      }
      this.taken = share;
    }
    if (!this.mayPass()) return null;
    if (this.taken > 0 && this.deadline === undefined) {
      const bytesDue = fragment ? this.budget.capacity : header.length;
      this.deadline = setTimeout(this.cut, FRAME_BASE_MS + (FRAME_MS_PER_MIB * bytesDue) / (1024 * 1024));
    }
    if (fragment) this.message = counted;
    return { endsMessage: fragment && header.final };
  }

  /** Whether a frame's next bytes may pass: a large one's only with a turn (else `resume` comes once it has one). */
  mayPass(): boolean {
    return this.taken === 0 || this.turn.need(this.resume);
  }

  /** A frame has passed whole. */
  ended(endsMessage: boolean): void {
    if (endsMessage) this.message = undefined;
    // A control frame between a message's fragments leaves the message's share taken.
    if (this.message !== undefined) return;
    clearTimeout(this.deadline);
    this.deadline = undefined;
    if (this.taken > 0) {
      this.turn.asked();
      this.budget.give(this.taken);
    }
    this.taken = 0;
  }

  /** The connection ended: what it held of the budget goes back. */
  close(): void {
    clearTimeout(this.deadline);
    if (this.waitingFor !== undefined) this.budget.forget(this.waitingFor);
    this.waitingFor = undefined;
    if (this.taken > 0) this.budget.give(this.taken);
    this.taken = 0;
  }
}
