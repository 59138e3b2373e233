/**
 * The object's one alarm, shared by everything that needs waking: held
 * pokes and token expiry (pokes.ts), and garbage collection (collector.ts).
 * A task asks to be woken by a time with `wakeBy` (the earliest asked wins);
 * when the alarm fires, every task runs and says when it next needs to, and
 * the alarm is set for the earliest of those. A task that needs nothing
 * answers null, so an idle workspace has no alarm.
 */
export interface AlarmTask {
  /** Does what is due at `now`; returns when it next needs to run, or null. */
  onAlarm(now: number): Promise<number | null>;
}

export class Scheduler {
  /** When the alarm is set for; undefined until read after the object starts. */
  private wakeAt: number | null | undefined = undefined;
  private readonly tasks: AlarmTask[] = [];

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly now: () => number,
  ) {}

  add(task: AlarmTask): void {
    this.tasks.push(task);
  }

  /** Makes sure the alarm fires no later than `at`. */
  async wakeBy(at: number): Promise<void> {
    if (this.wakeAt === undefined) this.wakeAt = await this.ctx.storage.getAlarm();
    if (this.wakeAt !== null && this.wakeAt <= at) return;
    this.wakeAt = at;
    await this.ctx.storage.setAlarm(at);
  }

  /** Removes the alarm (the workspace was deleted). */
  async clear(): Promise<void> {
    await this.ctx.storage.deleteAlarm();
    this.wakeAt = null;
  }

  /** The object's alarm: runs every task, then sets the alarm for the earliest next run any asked for. */
  async alarm(): Promise<void> {
    // The alarm that fired is spent; tasks that ask again while running set a new one.
    this.wakeAt = null;
    let next: number | null = null;
    for (const task of this.tasks) {
      const wake = await task.onAlarm(this.now());
      if (wake !== null) next = next === null ? wake : Math.min(next, wake);
    }
    if (next !== null) await this.wakeBy(next);
  }
}
