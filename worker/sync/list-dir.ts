/**
 * tree (GET, PROTOCOL.md §7.2): one page of a directory's children, for the
 * workspace page's browser. `entries` has no index by parent, and adding one
 * would bill a row more for every new file, so the listing skip-scans the
 * primary key instead: seek the first path after the cursor under the
 * directory; a direct child is listed; a deeper path names a child whose
 * whole subtree [child/, child0) is then skipped with one more seek. A page
 * of n children costs at most n seeks of SEEK_ROWS rows, whatever the size
 * of the subtrees (a directory holding node_modules lists as fast as an
 * empty one), and fewer where children have small subtrees or none.
 *
 * Children are the live entries one level down, so a directory is listed
 * by its own entry. Push tolerates a child whose parent entry is absent or
 * a tombstone (it may come in a later pack); until it comes, that parent is
 * not listed, though `file` serves the child's bytes.
 */
import type { TreeChild, TreePage, TreeQuery } from "../../protocol/browse.ts";
import type { Db } from "./db.ts";

/**
 * Rows one seek reads. A seek lands on a child and reads on through its
 * subtree's first rows or its next siblings: one statement serves a run of
 * flat children, and a subtree costs at most this many rows before the next
 * seek jumps past it. (One row a seek took ~180 ms for 200 children of a
 * node_modules in workerd, statements dominating; see BENCHMARKS.md.)
 */
const SEEK_ROWS = 32;
/**
 * Rows one page may read, tombstones and skipped subtree rows included: a
 * directory whose children were mostly deleted answers a short page with
 * `next` rather than scanning every tombstone in one request.
 */
export const MAX_ROWS_PER_PAGE = 4096;

interface Row {
  [column: string]: string | number | null;
  path: string;
  kind: string;
  rev: number;
  mode: number | null;
  mtime: number | null;
  size: number | null;
  target: string | null;
}

const COLUMNS = "path, kind, rev, mode, mtime, size, target";

export function listDirectory(db: Db, q: TreeQuery): TreePage {
  const prefix = q.dir === "" ? "" : `${q.dir}/`;
  // '0' is the byte after '/': [dir/, dir0) is the directory's subtree. The root has no end.
  const end = q.dir === "" ? null : `${q.dir}0`;
  const seek = (from: string, inclusive: boolean): Row[] => {
    const op = inclusive ? ">=" : ">";
    const bounded = end === null ? "" : "AND path < ?3";
    const sql = `SELECT ${COLUMNS} FROM entries WHERE path ${op} ?1 ${bounded} ORDER BY path LIMIT ?2`;
    return (end === null ? db.exec<Row>(sql, from, SEEK_ROWS) : db.exec<Row>(sql, from, SEEK_ROWS, end)).rows;
  };

  const children: TreeChild[] = [];
  let from = q.after === null ? prefix : prefix + q.after;
  let inclusive = q.after === null;
  for (let read = 0; read < MAX_ROWS_PER_PAGE; read += SEEK_ROWS) {
    const rows = seek(from, inclusive);
    // The subtree being skipped, `dir/child/`: rows under it are passed over (they are contiguous).
    let skipping: string | null = null;
    let last: Row | undefined;
    for (const row of rows) {
      last = row;
      if (skipping !== null && row.path.startsWith(skipping)) continue;
      skipping = null;
      const rest = row.path.slice(prefix.length);
      const slash = rest.indexOf("/");
      if (slash >= 0) {
        // Under a child already visited (its entry sorts before its subtree).
        skipping = `${prefix}${rest.slice(0, slash + 1)}`;
        continue;
      }
      if (row.kind === "gone") continue;
      // One more live child than the page holds proves there is a next page.
      if (children.length === q.limit) return { dir: q.dir, children, next: children[q.limit - 1]?.name ?? null };
      children.push(toChild(rest, row));
    }
    if (rows.length < SEEK_ROWS || last === undefined) return { dir: q.dir, children, next: null };
    if (skipping !== null) {
      from = `${skipping.slice(0, -1)}0`;
      inclusive = true;
    } else {
      from = last.path;
      inclusive = false;
    }
  }
  // Out of rows: resume after the last name looked at.
  const resume = from.slice(prefix.length);
  return { dir: q.dir, children, next: inclusive ? resume.slice(0, -1) : resume };
}

function toChild(name: string, row: Row): TreeChild {
  switch (row.kind) {
    case "file":
      return { name, kind: "file", rev: row.rev, mode: row.mode ?? 0, mtime: row.mtime ?? 0, size: row.size ?? 0 };
    case "symlink":
      return { name, kind: "symlink", rev: row.rev, target: row.target ?? "" };
    default:
      return { name, kind: "dir", rev: row.rev, mode: row.mode ?? 0, mtime: row.mtime ?? 0 };
  }
}
