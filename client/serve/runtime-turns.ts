/**
 * How many requests with large bodies the runtime works on at once, across
 * every connection of one `ferry serve` (front-door.ts, inbound.ts).
 * workerd grows by some 4-5 MiB for each such request it holds, whether
 * the Worker has let it in or it waits in the Worker's line for the process
 * budget (worker/do/inflight.ts): sixteen clients sending 60,000-chunk
 * pushes (1.9 MB) in a loop grew it by 64-71 MiB past one client's, 76
 * with the budget admitting two at a time, and sixteen that held back each
 * push's last byte by 79. With four at a time through the door, 26-35 and
 * 24, and as many pushes answered (bench/history/hostile-memory.md). So a
 * request whose body is 64 KiB or more passes to the runtime only with a
 * turn, kept until the head of its answer comes back (outbound.ts); the
 * answer's body, the Worker's to pace (answer-room.ts), streams after.
 * Smaller requests never wait here. A WebSocket's large frames
 * (frame-gate.ts) take turns of their own line, kept until the runtime
 * next sends on that socket.
 *
 * A turn is the runtime's work, not a client's upload: while others wait,
 * a connection whose body comes slower than TURN_MIN_BYTES a second is cut
 * (the host retries: PROTOCOL.md §2.1), and a request the runtime has not answered
 * TURN_MAX_MS after its last byte no longer holds one (a long collection, a
 * frame nothing answers). And a request waits for its turn at most
 * TURN_WAIT_MS, behind at most MAX_WAITING_TURNS: then it is answered `429`
 * as the Worker's line answers (door-refusal.ts).
 */
import { Line } from "./line.ts";

/** Large requests the runtime works on at once: four answer as many pushes as sixteen (see above). */
export const RUNTIME_TURNS = 4;
/** Large frames the runtime works on at once, in a line of their own: uploads over sockets. */
export const FRAME_TURNS = 2;
/**
 * While others wait, a request whose bytes come slower than TURN_MIN_BYTES in
 * each TURN_PACE_MS the door reads it is cut: one that stops, or trickles a
 * byte at a time to hold its turn until its body's deadline (the tester, with
 * a body refused for its workspace name, which the Worker reads to its end).
 */
export const TURN_PACE_MS = 1000;
export const TURN_MIN_BYTES = 256 * 1024;
/**
 * A request the runtime has not answered this long after its last byte no longer holds a turn: shorter
 * than TURN_WAIT_MS, so that the next in line gets it before it is refused.
 */
export const TURN_MAX_MS = 3000;
/** Longest a large request waits for its turn before it is refused (`429`, door-refusal.ts), as in the Worker's line. */
export const TURN_WAIT_MS = 5000;
/** Most connections waiting for a turn at once: past them, a new one is refused at once, as in the Worker's line. */
export const MAX_WAITING_TURNS = 256;
/** How often a held turn is looked at. */
const LOOK_EVERY_MS = 100;

/** Bytes a peer has sent, and milliseconds the door has spent reading it, since its connection began. */
export interface Pace {
  readonly bytes: number;
  readonly ms: number;
}

/** What a turn sees of its connection. */
export interface TurnHolder {
  /** Whether a large request's bytes are being passed on now (a body, a frame). */
  sending(): boolean;
  /** What its peer has sent, and for how long the door was reading it (not held back, nor waiting on the runtime). */
  pace(): Pace;
  /** Ends the connection, both sides. */
  cut(): void;
  /** Tells its peer to come back later (its request waited too long, or too many wait), and ends the connection. */
  refuse(): void;
}

/** The door's lines of turns: one for large requests, one for large frames. */
export class Turns {
  readonly requests = new Line(RUNTIME_TURNS);
  readonly frames = new Line(FRAME_TURNS);

  /** A new connection's place, in the requests' line. */
  connection(holder: TurnHolder): Turn {
    return new Turn(this.requests, holder);
  }
}

/** One connection's place in a line of turns. */
export class Turn {
  private held = false;
  private waitingFor: (() => void) | undefined;
  private waitTimer: NodeJS.Timeout | undefined;
  /** Requests passed on that the runtime has not answered yet. */
  private unanswered = 0;
  /** When its bytes were last seen coming (look). */
  private sentAt = 0;
  /** Its pace when the current stretch of TURN_PACE_MS began. */
  private paceFrom: Pace = { bytes: 0, ms: 0 };
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private line: Line,
    private readonly holder: TurnHolder,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Whether a request passed on waits for its answer. */
  get answering(): boolean {
    return this.unanswered > 0;
  }

  /** From now on takes turns in `line` (a WebSocket's frames), giving back any held in the other. */
  use(line: Line): void {
    this.giveBack();
    this.unanswered = 0;
    this.line = line;
  }

  /** True when the connection holds a turn, taking one if one is free; else false, and `then` runs once it does. */
  need(then: () => void): boolean {
    if (this.held) return true;
    if (this.waitingFor !== undefined) return false;
    if (this.line.queued >= MAX_WAITING_TURNS) {
      this.refuse();
      return false;
    }
    const grant = () => {
      clearTimeout(this.waitTimer);
      this.waitingFor = undefined;
      this.hold();
      then();
    };
    if (!this.line.take(1, grant)) {
      this.waitingFor = grant;
      this.waitTimer = setTimeout(() => this.refuse(), TURN_WAIT_MS).unref();
      return false;
    }
    this.hold();
    return true;
  }

  /** Gives up waiting: a connection with answers still to come is cut (a refusal would fall among them), else refused. */
  private refuse(): void {
    this.close();
    if (this.unanswered > 0) this.holder.cut();
    else this.holder.refuse();
  }

  /** A request was passed on (its head; a frame, once whole). */
  asked(): void {
    this.unanswered++;
  }

  /** The runtime answered the oldest request asked (`every`: all of them); once none waits, the turn is free. */
  answered(every = false): void {
    this.unanswered = every ? 0 : Math.max(0, this.unanswered - 1);
    if (this.unanswered === 0 && !this.holder.sending()) this.giveBack();
  }

  /** The connection ended. */
  close(): void {
    clearTimeout(this.waitTimer);
    if (this.waitingFor !== undefined) this.line.forget(this.waitingFor);
    this.waitingFor = undefined;
    this.giveBack();
  }

  private hold(): void {
    this.held = true;
    this.sentAt = this.now();
    this.paceFrom = this.holder.pace();
    this.timer ??= setInterval(() => this.look(), LOOK_EVERY_MS).unref();
  }

  private giveBack(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    if (!this.held) return;
    this.held = false;
    this.line.give(1);
  }

  private look(): void {
    const now = this.now();
    if (this.holder.sending()) {
      this.sentAt = now;
      const pace = this.holder.pace();
      if (this.line.queued === 0) this.paceFrom = pace;
      else if (pace.ms - this.paceFrom.ms >= TURN_PACE_MS) {
        if (pace.bytes - this.paceFrom.bytes < TURN_MIN_BYTES) this.holder.cut();
        this.paceFrom = pace;
      }
    } else if (this.unanswered === 0 || now - this.sentAt >= TURN_MAX_MS) {
      this.unanswered = 0;
      this.giveBack();
    }
  }
}
