/**
 * What a process's threads are doing, sampled from /proc (Linux): each
 * thread's state (`R` running or runnable, `S` asleep, `D` in an
 * uninterruptible wait: the disk) and, when not running, the kernel function
 * it waits in (`wchan`: `do_epoll_wait` is an event loop with nothing to do,
 * `futex_do_wait` a thread parked on a lock or condition, `jbd2_log_wait_commit`
 * or `folio_wait_bit` a wait on the disk). bench/trace.ts samples the host and
 * the object's workerd with it, to say what each side was doing while it was
 * not using a CPU. A sample is a snapshot: a state held for less than the
 * interval is seen in proportion to how often it is held.
 */
import { readdirSync, readFileSync } from "node:fs";

export interface ThreadState {
  /** The thread's name (`comm`) with digits dropped, so a pool's threads sum together. */
  readonly thread: string;
  /** `R`, or the wait (`S do_epoll_wait`, `D jbd2_log_wait_commit`, ...). */
  readonly state: string;
}

/** Every thread of `pid` now; empty once it is gone. */
export function threadStates(pid: number): ThreadState[] {
  const out: ThreadState[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const task of tasks) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      const comm = stat.slice(stat.indexOf("(") + 1, close).replace(/[0-9]+/g, "#");
      const state = stat[close + 2] ?? "?";
      const thread = task === String(pid) ? `${comm} (main)` : comm;
      if (state === "R") out.push({ thread, state });
      else out.push({ thread, state: `${state} ${readFileSync(`/proc/${pid}/task/${task}/wchan`, "utf8") || "?"}` });
    } catch {}
  }
  return out;
}

/** Time per thread and state, from samples `intervalMs` apart, largest first. */
export class ThreadStateTally {
  private readonly ms = new Map<string, number>();

  add(states: readonly ThreadState[], intervalMs: number): void {
    for (const { thread, state } of states) {
      const key = `${thread}\t${state}`;
      this.ms.set(key, (this.ms.get(key) ?? 0) + intervalMs);
    }
  }

  /** Rows of at least `minMs`, for a report. */
  rows(minMs = 50): { thread: string; state: string; ms: number }[] {
    return [...this.ms]
      .filter(([, ms]) => ms >= minMs)
      .map(([key, ms]) => {
        const [thread = "", state = ""] = key.split("\t");
        return { thread, state, ms: Math.round(ms) };
      })
      .sort((a, b) => a.thread.localeCompare(b.thread) || b.ms - a.ms);
  }
}
