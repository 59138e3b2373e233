/**
 * Summarizes V8 CPU profiles (from FERRY_BENCH_PROFILE=<dir> npm run bench:*,
 * or node --cpu-prof): self time by function and by file, across every
 * profile in a directory, so "where does the time go" has an answer with
 * function names in it.
 *
 *   npx tsx bench/profile.ts <dir | file.cpuprofile> [--top 25]
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { parseArgs } from "node:util";

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: "string", default: "25" } },
});
const target = positionals[0];
if (!target) throw new Error("usage: bench/profile.ts <dir | file.cpuprofile>");
const files = statSync(target).isDirectory()
  ? readdirSync(target)
      .filter((f) => f.endsWith(".cpuprofile"))
      .map((f) => join(target, f))
  : [target];

const byFunction = new Map<string, number>();
const byFile = new Map<string, number>();
let total = 0;
for (const file of files) {
  const p = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const nodes = new Map(p.nodes.map((n) => [n.id, n]));
  p.samples.forEach((id, i) => {
    const us = p.timeDeltas[i] ?? 0;
    const f = nodes.get(id)?.callFrame;
    if (!f) return;
    const where = f.url ? shorten(f.url) : "(native)";
    const name = `${f.functionName || "(anonymous)"}  ${where}:${f.lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    byFile.set(where, (byFile.get(where) ?? 0) + us);
    total += us;
  });
}

const top = Number(values.top);
const print = (title: string, m: Map<string, number>) => {
  process.stdout.write(`\n${title}\n`);
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    process.stdout.write(
      `${(us / 1000).toFixed(1).padStart(9)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}\n`,
    );
  }
};
process.stdout.write(
  `${files.length} profiles (${files
    .map((f) => basename(f))
    .slice(0, 3)
    .join(", ")}${files.length > 3 ? ", …" : ""}), ${(total / 1000).toFixed(0)} ms sampled\n`,
);
print("self time by function", byFunction);
print("self time by file", byFile);

function shorten(url: string): string {
  return url
    .replace(/^file:\/\//, "")
    .replace(/^.*\/node_modules\//, "node_modules/")
    .replace(/^.*\/work\/main\//, "");
}
