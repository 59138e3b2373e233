/**
 * What the host commands print: the summary of a sync, its warnings and (with
 * -v) every path moved; the one line per sync of a watch; `status` and
 * `--dry-run`. Each returns nothing; `exitFor` turns a report into the exit
 * status.
 */
import type { Rename } from "../engine/renames.ts";
import type { PathChange, SyncReport } from "../engine/report.ts";
import type { StatusReport } from "../engine/status.ts";
import { EXIT } from "./errors.ts";
import { summaryLine } from "./format.ts";
import type { Output } from "./output.ts";
import { describeMove, type Move, movesOf } from "./print-renames.ts";

/** Paths named in a watch line before "and N more". */
const NAMED_PATHS = 3;

/** Paths a status lists per direction without -v: a first sync of a large tree would print every file. */
const STATUS_LISTED = 50;

/** 0, or 3 when the sync finished but left something for a person: skipped or refused paths, conflict copies. */
export function exitFor(report: SyncReport): number {
  return report.skipped.length + report.refused.length + report.conflicts.length > 0 ? EXIT.incomplete : EXIT.ok;
}

export function printReport(out: Output, verb: string, workspace: string, report: SyncReport): void {
  if (out.flags.json) out.json({ workspace, ...report });
  else {
    printPaths(out, report);
    if (report.healed !== undefined)
      out.info(`ferry: healed ${report.healed} object(s) the server had lost (uploaded again from this directory)`);
    out.info(`ferry ${summaryLine(verb, report)}`);
  }
  printWarnings(out, report);
}

/** A watch's line for one sync that moved something: `12:04:05 sent a.txt, b.txt and 4 more; received c.txt`. */
export function printWatchReport(out: Output, workspace: string, report: SyncReport): void {
  if (out.flags.json) out.json({ workspace, ...report });
  else {
    printPaths(out, report, true);
    const parts = [];
    if (report.sent.length > 0) parts.push(`sent ${namePaths(report.sent, report.renamed?.sent)}`);
    if (report.received.length > 0) parts.push(`received ${namePaths(report.received, report.renamed?.received)}`);
    out.info(`ferry ${new Date().toTimeString().slice(0, 8)} ${parts.join("; ")}`);
  }
  printWarnings(out, report);
}

export function printStatus(out: Output, workspace: string, status: StatusReport, title: string): void {
  if (out.flags.json) {
    out.json({ workspace, ...status });
    return;
  }
  const { conflicts } = status;
  // A rename is one line, and counts once (print-renames.ts).
  const push = movesOf(status.toPush, status.renamed?.toPush);
  const pull = movesOf(status.toPull, status.renamed?.toPull);
  const toPush = [...push.moves.map(asLine), ...push.rest];
  const toPull = [...pull.moves.map(asLine), ...pull.rest];
  const lines = [
    `ferry ${title}: ${toPush.length} to push, ${toPull.length} to pull` +
      `${conflicts.length > 0 ? `, ${conflicts.length} in conflict` : ""} (server rev ${status.serverRev})`,
  ];
  if (status.serverRev === 0) lines.push(`workspace '${workspace}' is empty: nothing was pushed to it yet`);
  else if (status.resync) lines.push("the server was restored: the next sync compares the whole tree");
  const listed = out.flags.verbose ? Number.MAX_SAFE_INTEGER : STATUS_LISTED;
  for (const [verb, paths] of [
    ["push", toPush],
    ["pull", toPull],
    ["conflict", conflicts],
  ] as const) {
    for (const c of paths.slice(0, listed)) lines.push(`  ${verb}  ${c.kind.padEnd(7)} ${c.path}`);
    if (paths.length > listed)
      lines.push(
        `  … and ${paths.length - listed} more ${verb === "conflict" ? "in conflict" : `to ${verb}`} (-v lists every path)`,
      );
  }
  if (conflicts.length > 0)
    lines.push(
      "  (in conflict: changed here and on the server; a sync keeps the server's and the local one as a conflict copy)",
    );
  out.info(lines.join("\n"));
}

/** A move listed as a path: `rename  docs/ -> notes/ (12 files)`. */
function asLine(m: Move): { readonly path: string; readonly kind: string } {
  return { kind: "rename", path: describeMove(m) };
}

/**
 * Every path moved with -v; renames also without it (a run of deletions and
 * adds said less), unless a watch's line names them (`renamesNamed`).
 */
function printPaths(out: Output, report: SyncReport, renamesNamed = false): void {
  for (const [verb, changes, renames] of [
    ["sent", report.sent, report.renamed?.sent],
    ["received", report.received, report.renamed?.received],
  ] as const) {
    const { moves, rest } = movesOf(changes, renames);
    const listed = out.flags.verbose ? moves.length : renamesNamed ? 0 : STATUS_LISTED;
    for (const m of moves.slice(0, listed)) out.info(`  ${verb.padEnd(9)} rename  ${describeMove(m)}`);
    if (moves.length > listed && !renamesNamed)
      out.info(`  … and ${moves.length - STATUS_LISTED} more renamed (-v lists every path)`);
    for (const c of rest) out.detail(`  ${verb.padEnd(9)} ${c.kind.padEnd(7)} ${c.path}`);
  }
}

function printWarnings(out: Output, report: SyncReport): void {
  for (const c of report.conflicts) out.notice(`ferry: conflict: kept the local ${c.path} as ${c.copy}`);
  for (const s of report.skipped) out.notice(`ferry: skipped: ${s.path}: ${s.reason}`);
  for (const r of report.refused) out.notice(`ferry: refused: ${r.path}: ${r.reason}`);
}

/** `a.txt, b/c.txt, d.txt and 4 more` (deletions marked, renames as `old -> new`). */
function namePaths(changes: readonly PathChange[], renames: readonly Rename[] | undefined): string {
  const { moves, rest } = movesOf(changes, renames);
  const all = [...moves.map(describeMove), ...rest.map((c) => (c.kind === "gone" ? `${c.path} (deleted)` : c.path))];
  const named = all.slice(0, NAMED_PATHS);
  const more = all.length - named.length;
  return more > 0 ? `${named.join(", ")} and ${more} more` : named.join(", ");
}
