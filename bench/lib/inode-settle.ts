/**
 * File creation speed depends on what was deleted in the last minutes.
 *
 * ext4 without a journal (this machine's root filesystem: `ls /proc/fs/jbd2`
 * is empty) will not reuse an inode deleted in the last 60 s (360 s while
 * its inode-table block is still dirty); the allocator scans past every such
 * inode (`recently_deleted()` in fs/ext4/ialloc.c). After a benchmark
 * deletes a 29,000-file tree, creating the next one costs ~250 µs of kernel
 * time per file instead of ~25 µs: measured here, 37,000 creates took 1.0 s
 * on a settled disk and 9.5 s right after deleting a tree of the same size.
 * Whichever arm ran after a deletion paid for it, so the push benchmark
 * deletes nothing while it runs (outputs go when the session ends) and waits
 * for the disk to settle before it starts timing.
 */
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";

/**
 * A probe shaped like the trees it protects: small files spread over
 * directories. Measured here, µs per file: 150–220 in the minutes after a
 * 37,000-file deletion, 30–55 once settled. (Empty files in one directory,
 * the first version of this probe, read 20–80 in the slow state: too noisy
 * to tell.) Two probes in a row must pass.
 */
const SETTLED_US_PER_FILE = 80;
const PROBE_FILES = 2000;
const PROBE_DIRS = 20;
const PROBE_FILE_BYTES = 4096;
const PASSES_NEEDED = 2;
const WAIT_STEP_MS = 15_000;

export interface SettleResult {
  readonly settled: boolean;
  readonly waitedMs: number;
  /** µs per created file (4 KiB each) in the last probe. */
  readonly usPerFile: number;
}

/**
 * Probes file creation under `scratch` (the probe files are kept: deleting
 * them would add to what it waits for) until two probes in a row are as
 * fast as on a settled disk, or `maxWaitMs` passes.
 */
export async function waitForSettledInodes(
  scratch: string,
  log: (message: string) => void,
  maxWaitMs = 7 * 60_000,
): Promise<SettleResult> {
  const t0 = performance.now();
  let passes = 0;
  for (let probe = 0; ; probe++) {
    const usPerFile = timeCreates(join(scratch, `inode-probe-${probe}`));
    const waitedMs = performance.now() - t0;
    passes = usPerFile < SETTLED_US_PER_FILE ? passes + 1 : 0;
    if (passes >= PASSES_NEEDED) return { settled: true, waitedMs, usPerFile };
    if (passes > 0) continue;
    if (waitedMs > maxWaitMs) {
      log(
        `file creation still slow (${usPerFile.toFixed(0)} µs/file) after ${(waitedMs / 1000).toFixed(0)} s: timing anyway`,
      );
      return { settled: false, waitedMs, usPerFile };
    }
    log(
      `file creation slow (${usPerFile.toFixed(0)} µs/file, recently deleted inodes): waiting for the disk to settle`,
    );
    await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
  }
}

function timeCreates(dir: string): number {
  const bytes = new Uint8Array(PROBE_FILE_BYTES).fill(1);
  const t = performance.now();
  for (let d = 0; d < PROBE_DIRS; d++) mkdirSync(join(dir, `d${d}`), { recursive: true });
  for (let i = 0; i < PROBE_FILES; i++) {
    const fd = openSync(join(dir, `d${i % PROBE_DIRS}`, `f${i}`), "wx");
    writeSync(fd, bytes);
    closeSync(fd);
  }
  return ((performance.now() - t) * 1000) / PROBE_FILES;
}
