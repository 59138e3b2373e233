/**
 * A budget taken first come first served, shared by every connection of the
 * front door (front-door.ts): what is asked for is granted at once when it
 * fits and nobody waits before it, else when it does, in order. Its units are
 * the user's: bytes of frames in transit (frame-budget.ts), requests the
 * runtime works on (runtime-turns.ts).
 */
export class Line {
  private used = 0;
  private readonly waiting: { amount: number; grant: () => void }[] = [];

  constructor(readonly capacity: number) {}

  /** How many wait for their turn. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Takes `amount` now (true) or queues `grant` for when it is free (false). */
  take(amount: number, grant: () => void): boolean {
    if (this.waiting.length === 0 && this.used + amount <= this.capacity) {
      this.used += amount;
      return true;
    }
    this.waiting.push({ amount, grant });
    return false;
  }

  /** Gives back `amount` taken, and grants those waiting that now fit, in order. */
  give(amount: number): void {
    this.used -= amount;
    while (this.waiting.length > 0) {
      const next = this.waiting[0] as { amount: number; grant: () => void };
      if (this.used + next.amount > this.capacity) break;
      this.waiting.shift();
      this.used += next.amount;
      next.grant();
    }
  }

  /** Forgets a waiting `grant` (its connection ended before its turn). */
  forget(grant: () => void): void {
    const i = this.waiting.findIndex((w) => w.grant === grant);
    if (i >= 0) this.waiting.splice(i, 1);
    this.give(0);
  }
}
