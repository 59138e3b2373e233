/**
 * What the store knew, taken out path by path as the scanner's walk finds
 * each one; what is left was not found on disk. The store's rows come sorted
 * by path and the walk visits paths in nearly that order (depth first, names
 * sorted), so each path's row is found by moving a cursor, not by a lookup
 * in a map of every path: at 30,000 files the map's build and lookups were a
 * sixth of a no-op sync (BENCHMARKS.md section 14). Where the two orders
 * differ (`a.js` sorts between `a` and `a/x`, but the walk takes `a/x`
 * first), the rows the cursor passes wait in a small map until taken.
 *
 * The cursor moves through the fingerprint text itself (fingerprint-rows.ts),
 * never split into rows: a row the walk takes in order is matched where it
 * lies, and only its fingerprint is cut out (BENCHMARKS.md section 18).
 */
import { SURROGATE, sortPaths } from "../../protocol/cursor.ts";
import { joinRows, splitRows, TOMBSTONE_FLAG } from "../store/fingerprint-rows.ts";

export class KnownPaths {
  /** The fingerprint text, its rows in JavaScript's string order, which `take` compares with. */
  private readonly text: string;
  /** Where the next row the cursor has not passed starts (the text's length: none left). */
  private next = 0;
  /** Rows the cursor passed before the walk took them: each path's row start. */
  private readonly passed = new Map<string, number>();
  /** Directories that could not be read: nothing under them is taken for gone. */
  private readonly kept: string[] = [];

  /** `text`: fingerprint rows joined (fingerprint-rows.ts), in the store's order. */
  constructor(text: string) {
    // The store's order is UTF-8's, which differs only around surrogates: then the rows are sorted
    // again (nearly sorted input sorts in one pass).
    this.text = SURROGATE.test(text) ? joinRows(splitRows(text).sort()) : text;
  }

  /** How many rows the store knew. */
  get size(): number {
    const { text } = this;
    if (text === "") return 0;
    let rows = 1;
    for (let at = text.indexOf("\0\0"); at >= 0; at = text.indexOf("\0\0", at + 2)) rows++;
    return rows;
  }

  /**
   * The store's fingerprint of `path` (null: read it again), or undefined
   * when it has no record of it; either way `path` is no longer left over.
   * When it equals `now` (the walk's fingerprint), `now` itself is returned:
   * an unchanged path's fingerprint is compared in place, not cut out.
   */
  take(path: string, now: string | null = null): string | null | undefined {
    const { text, passed } = this;
    let at = this.next;
    while (at < text.length) {
      // A NUL ends the path in a row: this is `path`'s row.
      if (text.startsWith(path, at) && text.charCodeAt(at + path.length) === 0) {
        const end = rowEnd(text, at + path.length);
        this.next = end === text.length ? end : end + 2;
        return statBetween(text, at + path.length, end, now);
      }
      const nul = text.indexOf("\0", at);
      const rowPath = text.slice(at, nul);
      // `path`'s row, if not passed already, is where the cursor stops.
      if (rowPath > path) break;
      passed.set(rowPath, at);
      const end = rowEnd(text, nul);
      at = end === text.length ? end : end + 2;
    }
    this.next = at;
    const start = passed.get(path);
    if (start === undefined) return undefined;
    passed.delete(path);
    return statBetween(text, start + path.length, rowEnd(text, start + path.length), now);
  }

  /** Keeps what is recorded under `dir` from being left over: the walk could not read it, and absence is not deletion. */
  keepUnder(dir: string): void {
    this.kept.push(dir === "" ? "" : `${dir}/`);
  }

  /** The recorded paths the walk did not take, in path order, each with whether its record is a tombstone. */
  left(): { readonly path: string; readonly gone: boolean }[] {
    const { text } = this;
    const gone = new Set<string>();
    const paths: string[] = [];
    const add = (path: string, nul: number) => {
      if (this.kept.some((dir) => path.startsWith(dir))) return;
      paths.push(path);
      if (text.charCodeAt(nul + 1) === TOMBSTONE_FLAG) gone.add(path);
    };
    for (const [path, start] of this.passed) add(path, start + path.length);
    for (let at = this.next; at < text.length; ) {
      const nul = text.indexOf("\0", at);
      add(text.slice(at, nul), nul);
      const end = rowEnd(text, nul);
      at = end === text.length ? end : end + 2;
    }
    return sortPaths(paths).map((path) => ({ path, gone: gone.has(path) }));
  }
}

/** Where the row whose NUL is at `nul` ends: at the separator after it, or at the text's end. */
function rowEnd(text: string, nul: number): number {
  // A row holds one NUL: the next one starts the separator.
  const end = text.indexOf("\0", nul + 1);
  return end < 0 ? text.length : end;
}

/** The fingerprint of the row whose NUL is at `nul` and which ends at `end` (null: read it again); `now` when equal. */
function statBetween(text: string, nul: number, end: number, now: string | null): string | null {
  if (end === nul + 2) return null;
  if (now !== null && end - (nul + 3) === now.length && text.startsWith(now, nul + 3)) return now;
  return text.slice(nul + 3, end);
}
