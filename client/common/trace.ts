/**
 * A diagnosis log, off by default: with FERRY_TRACE=<file> the engine
 * appends one line per thing it does to a path (the applier's decisions and
 * the inputs they were taken from, renames, removals, conflict copies; the
 * scanner's stamps; pushes and the server's answers), each prefixed with the
 * time in ms since the epoch. The convergence soak turns it on per host and
 * prints a lost path's lines (test/node/support/soak-trace.ts). Not a
 * contract: lines change with the code. Shared by scan and engine.
 */
import { appendFileSync } from "node:fs";
import type { Entry } from "../../protocol/entry.ts";
import { toHex } from "../../protocol/hash.ts";

const TRACE_FILE = process.env.FERRY_TRACE || null;

/** Appends the line `describe` builds; it is not called unless tracing. */
export function trace(describe: () => string): void {
  if (TRACE_FILE) appendFileSync(TRACE_FILE, `${Date.now()} ${describe()}\n`);
}

/**
 * An entry in a few characters: `file:<first 10 hex of each chunk>:<mode>`
 * (a small file's one chunk hash is its content's SHA-256, which the soak's
 * ledger names the same way), `link:<target>`, `dir`, `gone`, or `none`.
 */
export function traceEntry(e: Entry | null | undefined): string {
  if (!e) return "none";
  if (e.kind === "file") return `file:${e.chunks.map((c) => toHex(c).slice(0, 10)).join("+")}:${e.mode.toString(8)}`;
  if (e.kind === "symlink") return `link:${e.target}`;
  return e.kind;
}
