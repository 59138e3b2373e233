/**
 * Where results go: `bench/results/<name>.json` (every sample, the counts, the
 * machine and the commit) and `bench/results/<name>.md` (the tables as
 * BENCHMARKS.md shows them), so every published figure has a file and a
 * command behind it.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, freemem, loadavg, release, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const BENCH_DIR = dirname(dirname(fileURLToPath(import.meta.url)));
export const REPO_DIR = dirname(BENCH_DIR);
export const RESULTS_DIR = join(BENCH_DIR, "results");

export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly freeMemoryGiB: number;
  readonly loadAverage: readonly number[];
  readonly kernel: string;
  readonly node: string;
  readonly commit: string;
  readonly dirty: boolean;
}

export function describeMachine(): Machine {
  const git = (...args: string[]) => {
    try {
      return execFileSync("git", args, { cwd: REPO_DIR, encoding: "utf8" }).trim();
    } catch {
      return "";
    }
  };
  return {
    cpu: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    freeMemoryGiB: Math.round((freemem() / 2 ** 30) * 10) / 10,
    loadAverage: loadavg().map((l) => Math.round(l * 100) / 100),
    kernel: release(),
    node: process.version,
    commit: git("rev-parse", "--short", "HEAD") || "unknown",
    dirty: git("status", "--porcelain", "--untracked-files=no", "--", "worker", "client", "protocol") !== "",
  };
}

export interface ResultHeader {
  readonly bench: string;
  readonly command: string;
  readonly startedAt: string;
  readonly machine: Machine;
}

/** Writes `<name>.json` and, when given, `<name>.md`. Returns the JSON path. */
export function writeResults(name: string, data: ResultHeader & Record<string, unknown>, markdown?: string): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const after = describeMachine();
  const file = {
    ...data,
    finishedAt: new Date().toISOString(),
    machineAfter: { loadAverage: after.loadAverage, freeMemoryGiB: after.freeMemoryGiB },
  };
  const path = join(RESULTS_DIR, `${name}.json`);
  writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`);
  if (markdown !== undefined) writeFileSync(join(RESULTS_DIR, `${name}.md`), markdown);
  return path;
}

/** A markdown table; numbers are right-aligned. */
export function markdownTable(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const align = header.map((_, i) =>
    rows.every((r) => /^[-\d.,x×%]+( |$)/.test(String(r[i] ?? ""))) ? "---:" : "---",
  );
  const line = (cells: readonly (string | number)[]) => `| ${cells.map(String).join(" | ")} |`;
  return [line(header), line(align), ...rows.map(line)].join("\n");
}
