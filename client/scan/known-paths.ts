/**
 * What the store knew, taken out path by path as the scanner's walk finds
 * each one; what is left was not found on disk. The store's rows come sorted
 * by path and the walk visits paths in nearly that order (depth first, names
 * sorted), so each path's row is found by moving a cursor, not by a lookup
 * in a map of every path: at 30,000 files the map's build and lookups were a
 * sixth of a no-op sync (BENCHMARKS.md section 14). Where the two orders
 * differ (`a.js` sorts between `a` and `a/x`, but the walk takes `a/x`
 * first), the rows the cursor passes wait in a small map until taken.
 */
import { sortPaths } from "../../protocol/cursor.ts";
import { isRowOf, rowIsGone, rowPath, rowStat } from "../store/fingerprint-rows.ts";

export class KnownPaths {
  private next = 0;
  /** Rows the cursor passed before the walk took them, by path. */
  private readonly passed = new Map<string, string>();
  /** Directories that could not be read: nothing under them is taken for gone. */
  private readonly kept: string[] = [];

  /** `rows`: fingerprint rows (fingerprint-rows.ts), sorted here in JavaScript's string order, which `take` compares with. */
  constructor(private readonly rows: string[]) {
    // The store's order is UTF-8's, which differs only around surrogates; nearly sorted input sorts in one pass.
    rows.sort();
  }

  get size(): number {
    return this.rows.length;
  }

  /**
   * The store's fingerprint of `path` (null: read it again), or undefined
   * when it has no record of it; either way `path` is no longer left over.
   */
  take(path: string): string | null | undefined {
    const { rows, passed } = this;
    let at = this.next;
    // A row sorts below `path` exactly when its path does (a NUL ends the path in the row),
    // so `path`'s row, if not passed already, is where this stops.
    while (at < rows.length && (rows[at] as string) < path) {
      const row = rows[at++] as string;
      passed.set(rowPath(row), row);
    }
    this.next = at;
    let row = rows[at];
    if (row !== undefined && isRowOf(row, path)) {
      this.next = at + 1;
    } else {
      row = passed.get(path);
      if (row === undefined) return undefined;
      passed.delete(path);
    }
    return rowStat(row, path);
  }

  /** Keeps what is recorded under `dir` from being left over: the walk could not read it, and absence is not deletion. */
  keepUnder(dir: string): void {
    this.kept.push(dir === "" ? "" : `${dir}/`);
  }

  /** The recorded paths the walk did not take, in path order, each with whether its record is a tombstone. */
  left(): { readonly path: string; readonly gone: boolean }[] {
    const gone = new Set<string>();
    const paths: string[] = [];
    const add = (row: string) => {
      const path = rowPath(row);
      if (this.kept.some((dir) => path.startsWith(dir))) return;
      paths.push(path);
      if (rowIsGone(row, path)) gone.add(path);
    };
    for (const row of this.passed.values()) add(row);
    for (let at = this.next; at < this.rows.length; at++) add(this.rows[at] as string);
    return sortPaths(paths).map((path) => ({ path, gone: gone.has(path) }));
  }
}
