/**
 * The soak's diagnosis: each watcher runs with FERRY_TRACE (client/common/trace.ts)
 * writing to a file of its own, and a failure prints the history of the
 * paths it names: every host's trace lines and the writers' ledger lines
 * about the path, its ancestors (a type swap of `e` removes `e/f`), what is
 * under it, and the lost version's content, merged in time order. The whole
 * history, and every host's whole trace, go to files that outlive the test's
 * temporary directories.
 */
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Lines printed in a failure message; the file has them all. */
const SHOWN_LINES = 300;

/** Whether a line names `path`, one of its ancestors, a path under it, or `digest` (10 hex). */
function concerns(line: string, path: string, digest: string | undefined): boolean {
  for (const raw of line.split(/[\s,]+/)) {
    const token = raw.replace(/^[("]+|[):,"]+$/g, "");
    if (token !== "" && (path === token || path.startsWith(`${token}/`) || token.startsWith(`${path}/`))) return true;
    if (digest && token.includes(digest)) return true;
  }
  return false;
}

/**
 * The merged history of `paths` (with the content digests of lost versions)
 * from the hosts' trace files and the writers' ledger, each line `<ms> <who> ...`.
 * Returns the last SHOWN_LINES and the file holding all of them.
 */
export function historyOf(
  seed: number,
  /** What went wrong, the history file's first line. */
  title: string,
  paths: readonly { readonly path: string; readonly digest?: string }[],
  traceFiles: readonly string[],
  ledger: readonly string[],
): string {
  const sources = [
    ...traceFiles.map((file, i) => ({ who: `host ${i}:`, lines: readLines(file) })),
    { who: "writers:", lines: ledger },
  ];
  const picked: { at: number; text: string }[] = [];
  for (const { who, lines } of sources) {
    for (const line of lines) {
      // A reconcile or resync changes how every path is judged: kept for context.
      const wholeTree = / sync re(concile|sync)/.test(line);
      if (!wholeTree && !paths.some((p) => concerns(line, p.path, p.digest?.slice(0, 10)))) continue;
      const space = line.indexOf(" ");
      picked.push({
        at: Number(line.slice(0, space)),
        text: `${line.slice(0, space)} ${who} ${line.slice(space + 1)}`,
      });
    }
  }
  // Stable: lines of one source at one ms keep their order.
  picked.sort((a, b) => a.at - b.at);
  const base = join(tmpdir(), `ferry-soak-${seed}-${Date.now()}`);
  const file = `${base}.history`;
  writeFileSync(file, [title, ...picked.map((p) => p.text)].join("\n"));
  writeFileSync(`${base}.writers`, ledger.join("\n"));
  traceFiles.forEach((t, i) => {
    if (existsSync(t)) copyFileSync(t, `${base}.host-${i}`);
  });
  const shown = picked.slice(-SHOWN_LINES).map((p) => p.text);
  return `history of ${paths.map((p) => p.path).join(", ")} (${picked.length} lines, all in ${file}; the whole traces in ${base}.*):\n${shown.join("\n")}`;
}

function readLines(file: string): string[] {
  try {
    return readFileSync(file, "utf8").split("\n").filter(Boolean);
  } catch {
    return [];
  }
}
