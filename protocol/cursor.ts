/**
 * A resume point in one side's rev space. `path: null` means all of `rev` has
 * been delivered; a path means "delivered up to and including this path
 * within rev". Changes stream in (rev, path) order.
 */
export interface Cursor {
  readonly rev: number;
  readonly path: string | null;
}

/** The cursor before anything: nothing delivered. */
export const ORIGIN: Cursor = { rev: 0, path: null };

/** The rev through which `cursor` has delivered every change (one inside a rev has not seen all of it). */
export function wholeRevsThrough(cursor: Cursor): number {
  return cursor.path === null ? cursor.rev : cursor.rev - 1;
}

const utf8 = new TextEncoder();

/**
 * Orders paths by their UTF-8 bytes, which is SQLite's BINARY collation.
 * JavaScript's `<` compares UTF-16 code units and disagrees for characters
 * above U+FFFF, so every order that reaches the wire or storage (cursors,
 * changes pages, sorted probes) uses this. A host's scan walks directories in
 * its own order; that order is local and never compared with the server's.
 */
export function comparePaths(a: string, b: string): number {
  if (a === b) return 0;
  const x = utf8.encode(a);
  const y = utf8.encode(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const d = (x[i] as number) - (y[i] as number);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** A surrogate: UTF-16's order (JavaScript's) and UTF-8's (comparePaths') agree on text without one. */
export const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Sorts paths in place in comparePaths order: with JavaScript's own sort
 * when no path holds a surrogate (a character above U+FFFF), where the two
 * orders agree, and without encoding every path at every comparison.
 */
export function sortPaths(paths: string[]): string[] {
  return paths.some((p) => SURROGATE.test(p)) ? paths.sort(comparePaths) : paths.sort();
}

/** Cursor order: by rev, then by path, with a null path after every path of its rev. */
export function compareCursors(a: Cursor, b: Cursor): number {
  if (a.rev !== b.rev) return a.rev - b.rev;
  if (a.path === b.path) return 0;
  if (a.path === null) return 1;
  if (b.path === null) return -1;
  return comparePaths(a.path, b.path);
}

export function cursorsEqual(a: Cursor, b: Cursor): boolean {
  return compareCursors(a, b) === 0;
}
