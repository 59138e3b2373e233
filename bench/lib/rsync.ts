/**
 * The yardstick for push and pull: `rsync -a` copying the same tree to an
 * empty local folder, timed from spawn to exit like a ferry host process.
 * When rsync is not installed the comparison is skipped, and the report says
 * so rather than publishing ratios against nothing.
 */
import { spawn, spawnSync } from "node:child_process";

/** `rsync  version 3.2.7 ...` or null when rsync is absent. */
export function rsyncVersion(): string | null {
  const r = spawnSync("rsync", ["--version"], { encoding: "utf8" });
  if (r.error || r.status !== 0) return null;
  return r.stdout.split("\n")[0]?.trim() ?? "rsync";
}

export const RSYNC_MISSING =
  "rsync is not installed, so the rsync comparison was skipped (install it, e.g. `apt-get install -y rsync`, and run again).";

/** Copies `src/` into `dest/` with `rsync -a`; returns the wall time in ms. */
export function timeRsync(src: string, dest: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn("rsync", ["-a", `${src}/`, `${dest}/`], { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = performance.now() - t;
      if (code === 0) resolve(ms);
      else reject(new Error(`rsync exited ${code}: ${err.trim()}`));
    });
  });
}
