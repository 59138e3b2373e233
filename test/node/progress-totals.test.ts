/**
 * Issue 29: progress that advances. Every progress line a terminal shows
 * counts files or bytes against a known total (a pull's total so far, with
 * `+`, while pages are still to come), its figures never go back, and each
 * line's last figures are its total once the work is done; work with no
 * known total (a first scan, the bytes sent while it still hashes) shows no
 * line. Progress shows only on a terminal, so ferry runs in a real
 * pseudo-terminal (support/terminal.ts) and every frame it drew is read
 * back from the raw output, escape sequences and all.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { cliEnv } from "./support/cli.ts";
import { cleanup, newWorkspace, tempDir } from "./support/hosts.ts";
import { ferryInTerminal } from "./support/terminal.ts";
import { writeTree } from "./support/tree.ts";

afterEach(cleanup);

const TASK = /^(scan|hash|upload|push|pull|download) +[\d.]/;
/** `upload   12 MiB / 40 MiB 30%  …`, `pull     800 / 5000+  …` */
const FIGURES = /^(\w+) +([\d.]+(?: [KMGT]?i?B)?) \/ ([\d.]+(?: [KMGT]?i?B)?)(\+| (\d+)%)/;
const UNITS: Record<string, number> = { B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3, TiB: 1024 ** 4 };

interface Frame {
  readonly task: string;
  readonly done: number;
  readonly doneText: string;
  readonly totalText: string;
  readonly percent: number | null;
}

const amount = (text: string) => {
  const [n, unit] = text.split(" ");
  return Number(n) * (unit ? (UNITS[unit] as number) : 1);
};

/** Every task line ever drawn, in order: the raw output cut at carriage returns, newlines and escapes. */
function framesOf(raw: string): { lines: string[]; frames: Frame[] } {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the terminal's escape sequences are what is cut out
  const lines = raw.split(/\x1b\[[0-9]*[A-Za-z]|\r|\n/).filter((l) => TASK.test(l));
  const frames = lines.flatMap((l) => {
    const m = FIGURES.exec(l);
    if (!m) return [];
    const [, task, doneText, totalText, , pct] = m as unknown as string[];
    return [
      {
        task: task as string,
        done: amount(doneText as string),
        doneText: doneText as string,
        totalText: totalText as string,
        percent: pct === undefined ? null : Number(pct),
      },
    ];
  });
  return { lines, frames };
}

/** Asserts every line had a total, each task's figures never went back, and each ended at its total. */
function expectAdvancingToTotals(raw: string, tasks: readonly string[]): Frame[] {
  const { lines, frames } = framesOf(raw);
  expect(
    lines.filter((l) => !FIGURES.test(l)),
    "lines with no total",
  ).toEqual([]);
  for (const task of tasks) {
    const mine = frames.filter((f) => f.task === task);
    expect(mine.length, `${task} lines drawn`).toBeGreaterThan(0);
    const dones = mine.map((f) => f.done);
    expect(dones, `${task} figures in order`).toEqual([...dones].sort((a, b) => a - b));
    const last = mine[mine.length - 1] as Frame;
    expect(`${last.doneText} / ${last.totalText} ${last.percent}%`, `${task}'s last line`).toBe(
      `${last.totalText} / ${last.totalText} 100%`,
    );
  }
  return frames;
}

function files(count: number, bytes: number): Record<string, string> {
  const tree: Record<string, string> = {};
  for (let i = 0; i < count; i++) tree[`d${i % 20}/f${i}.bin`] = randomBytes(bytes / 2).toString("hex");
  return tree;
}

describe("progress lines in a terminal", () => {
  it("count files and bytes against their totals and end there: push, a rescan, and pull", async () => {
    const env = cliEnv(newWorkspace(), { FERRY_PACK_ENTRIES: "100" });
    const dir = tempDir("progress-push");
    writeTree(dir, files(800, 48 * 1024));

    // A first push: the scan knows no total (nothing was synced), so only the push and its uploads show.
    const push = ferryInTerminal(["push", dir], env);
    const code = await push.exited;
    expect(code, push.raw()).toBe(0);
    const pushed = expectAdvancingToTotals(push.raw(), ["push"]);
    expect(pushed.filter((f) => f.task === "push").at(-1)?.totalText).toBe("820");
    expect(pushed.filter((f) => f.task === "scan")).toEqual([]);

    // A rescan: the store knows its 820 paths, and the scan counts them.
    writeTree(dir, { "d0/new.bin": "new\n" });
    const again = ferryInTerminal(["push", dir], env);
    expect(await again.exited).toBe(0);
    const rescanned = expectAdvancingToTotals(again.raw(), ["scan", "push"]);
    expect(rescanned.filter((f) => f.task === "scan").at(-1)?.totalText).toBe("821");
    expect(rescanned.filter((f) => f.task === "push").at(-1)?.totalText).toBe("1");

    // A pull into an empty folder: every entry and every byte, against totals known from the page.
    const pull = ferryInTerminal(["pull", tempDir("progress-pull")], env);
    expect(await pull.exited).toBe(0);
    const pulled = expectAdvancingToTotals(pull.raw(), ["pull", "download"]);
    expect(pulled.filter((f) => f.task === "pull").at(-1)?.totalText).toBe("821");
    expect(pulled.filter((f) => f.task === "download").at(-1)?.totalText).toBe("38 MiB");
  }, 180_000);
});
