/**
 * The store's fingerprints as the scanner reads them: one string per
 * recorded path, `path NUL flag [= stat]`, where the flag is `g` for a
 * tombstone and `k` for anything else, and no `= stat` means "read it
 * again" (a null fingerprint). One string per row, not an object: the
 * binding's object per row cost the 30,000-file no-op sync more than the SQL
 * read itself (BENCHMARKS.md section 10). A NUL is in no path, so a row
 * sorts exactly where its path does.
 *
 * The rows travel joined into one text, ROWS_SEPARATOR between two rows, as
 * the store keeps them (`scan_rows`) and as the scanner walks them
 * (known-paths.ts): splitting 34,771 rows into strings cost a no-op sync of
 * 30,000 files more than reading them (BENCHMARKS.md section 18). A row
 * holds exactly one NUL, followed by its flag, so two NULs in a row are only
 * ever the separator.
 */

/** `g`: the flag of a tombstone's row. */
export const TOMBSTONE_FLAG = 0x67;

/** Between two rows of a fingerprint text. */
export const ROWS_SEPARATOR = "\0\0";

/** The row of one record (a watcher's subtree scan builds them from records; sqlite-store.ts's SQL makes the same). */
export function fingerprintRow(path: string, gone: boolean, stat: string | null): string {
  return `${path}\0${gone ? "g" : "k"}${stat === null ? "" : `=${stat}`}`;
}

/** Rows as one fingerprint text. */
export function joinRows(rows: readonly string[]): string {
  return rows.join(ROWS_SEPARATOR);
}

/** The rows of a fingerprint text (none in ""). */
export function splitRows(text: string): string[] {
  return text === "" ? [] : text.split(ROWS_SEPARATOR);
}

/** The path of a row. */
export function rowPath(row: string): string {
  return row.slice(0, row.indexOf("\0"));
}

/** The fingerprint in the row of `path` (null: read it again). */
export function rowStat(row: string, path: string): string | null {
  return row.length === path.length + 2 ? null : row.slice(path.length + 3);
}

/** Whether the row of `path` is a tombstone's. */
export function rowIsGone(row: string, path: string): boolean {
  return row.charCodeAt(path.length + 1) === TOMBSTONE_FLAG;
}
