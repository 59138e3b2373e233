/**
 * The store's fingerprints as the scanner reads them: one string per
 * recorded path, `path NUL flag [= stat]`, where the flag is `g` for a
 * tombstone and `k` for anything else, and no `= stat` means "read it
 * again" (a null fingerprint). One string per row, not an object: the
 * binding's object per row cost the 30,000-file no-op sync more than the SQL
 * read itself (BENCHMARKS.md section 10). A NUL is in no path, so a row
 * sorts exactly where its path does.
 */

/** `g`: the flag of a tombstone's row. */
export const TOMBSTONE_FLAG = 0x67;

/** The row of one record (a watcher's subtree scan builds them from records; sqlite-store.ts's SQL makes the same). */
export function fingerprintRow(path: string, gone: boolean, stat: string | null): string {
  return `${path}\0${gone ? "g" : "k"}${stat === null ? "" : `=${stat}`}`;
}

/** The path of a row. */
export function rowPath(row: string): string {
  return row.slice(0, row.indexOf("\0"));
}

/** Whether `row` is the row of `path`. */
export function isRowOf(row: string, path: string): boolean {
  return row.charCodeAt(path.length) === 0 && row.startsWith(path);
}

/** The fingerprint in the row of `path` (null: read it again). */
export function rowStat(row: string, path: string): string | null {
  return row.length === path.length + 2 ? null : row.slice(path.length + 3);
}

/** Whether the row of `path` is a tombstone's. */
export function rowIsGone(row: string, path: string): boolean {
  return row.charCodeAt(path.length + 1) === TOMBSTONE_FLAG;
}
