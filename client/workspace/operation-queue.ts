/**
 * A workspace's operations, one at a time (workspace.ts): each runs when the
 * one before it has ended. While a watch runs it holds the queue, and other
 * operations take turns with its syncs (engine/watch.ts) instead of waiting
 * for it to end.
 */
import type { Turns } from "../engine/watch.ts";

/** The operation now running: what a hello may record or must refuse, and the signal that cancels its calls. */
export interface Running {
  readonly records: boolean;
  readonly mustExist: boolean;
  readonly signal: AbortSignal | undefined;
}

const IDLE: Running = { records: false, mustExist: false, signal: undefined };

export class OperationQueue {
  /** The operation now running (the workspace's hello handler and transport read it). */
  running: Running = IDLE;
  private queue: Promise<unknown> = Promise.resolve();
  private watching: { readonly op: Running; readonly turns: Promise<Turns> } | null = null;
  private turnsDone: Promise<unknown> = Promise.resolve();

  /** Runs `fn` as `op` once what is before it has ended, or as a turn of the watch running. */
  run<T>(op: Running, fn: () => Promise<T>): Promise<T> {
    if (this.watching) {
      const { op: watchOp, turns } = this.watching;
      const next = turns.then((t) => t.turn(() => this.runAs(op, fn, watchOp)));
      this.turnsDone = Promise.all([this.turnsDone, next.catch(() => {})]);
      return next;
    }
    const next = this.queue.then(() => this.runAs(op, fn, IDLE));
    this.queue = next.catch(() => {});
    return next;
  }

  /**
   * Runs a watch (`loop`, which hands its turns as soon as it has them) as
   * `op`, holding the queue until it ends: what is asked meanwhile takes
   * its turns.
   */
  watch(op: Running, loop: (handTurns: (turns: Turns) => void) => Promise<void>): Promise<void> {
    let handTurns: (t: Turns) => void = () => {};
    const turns = new Promise<Turns>((resolve) => {
      handTurns = resolve;
    });
    // Set before the loop starts, so that nothing asked meanwhile waits for the watch to end.
    const watching = { op, turns };
    const ran = this.run(op, () => loop(handTurns));
    this.watching = watching;
    return ran.finally(() => {
      if (this.watching === watching) this.watching = null;
      // A watch that ended before its loop began (aborted at once) never
      // handed its turns: what waits for them runs in the queue instead.
      handTurns({
        turn: (operation) => {
          const next = this.queue.then(operation).finally(() => {
            this.running = IDLE;
          });
          this.queue = next.catch(() => {});
          return next;
        },
      });
    });
  }

  /** Settles once every operation queued so far, and every turn asked of a watch, has ended. */
  async drained(): Promise<void> {
    await this.queue;
    await this.turnsDone;
  }

  private async runAs<T>(op: Running, fn: () => Promise<T>, after: Running): Promise<T> {
    op.signal?.throwIfAborted();
    this.running = op;
    try {
      return await fn();
    } finally {
      this.running = after;
    }
  }
}
