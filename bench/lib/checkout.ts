/**
 * The repository as it was at a git ref, extracted (`git archive`) into a
 * scratch directory, with this tree's node_modules linked in: a benchmark's
 * baseline arm runs that commit's host or server beside this tree's
 * (bench:push --baseline, bench:ingest --baseline), for a before/after in
 * one run.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { REPO_DIR } from "./results.ts";

export function checkoutAt(ref: string, dir: string): string {
  mkdirSync(dir, { recursive: true });
  const archive = execFileSync("git", ["-C", REPO_DIR, "archive", "--format=tar", ref], { maxBuffer: 1 << 30 });
  execFileSync("tar", ["-x", "-C", dir], { input: archive });
  symlinkSync(join(REPO_DIR, "node_modules"), join(dir, "node_modules"));
  return dir;
}
