/**
 * bin/ferry.cjs gives V8's optimizing compiler eight times its default
 * budget before it starts, for the commands that scan or sync: a short
 * command gains nothing from compiling its hot code again. A scan of a large
 * tree is not short: its walk runs long enough for optimized code to pay,
 * and with the raised budget a no-op `ferry sync` of 30,000 files took ~15%
 * more CPU (while at 3,000 files the budget saves ~13%; BENCHMARKS.md
 * section 14). So once a scan tells how many paths the store holds, a large
 * tree gets V8's default back, before the walk starts.
 */
import { setFlagsFromString } from "node:v8";
import type { ProgressSink } from "../engine/report.ts";

/** From this many recorded paths a scan runs with V8's default budget (3,000 gains from the raised one, 30,000 loses). */
const LARGE_SCAN_PATHS = 10_000;

/** V8's default `--interrupt-budget` in Node 20 (`node --v8-options`). */
const V8_DEFAULT_INTERRUPT_BUDGET = 67_584;

/** `sink`, which also restores V8's default budget when a scan begins over a large tree (session.ts). */
export function optimizingLargeScans(sink: ProgressSink): ProgressSink {
  let restored = false;
  return {
    begin(task, total) {
      if (task === "scan" && total >= LARGE_SCAN_PATHS && !restored) {
        restored = true;
        setFlagsFromString(`--interrupt-budget=${V8_DEFAULT_INTERRUPT_BUDGET}`);
      }
      sink.begin(task, total);
    },
    advance: (task, delta) => sink.advance(task, delta),
    end: (task) => sink.end(task),
  };
}
