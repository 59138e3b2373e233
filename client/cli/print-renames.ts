/**
 * Renames as a person reads them (issue 29): the renames the engine paired
 * (engine/renames.ts) among a list of changes, a folder whose every path
 * moved together told once with a count (`docs/ -> notes/ (12 files)`),
 * and the changes they leave to list one by one.
 */
import type { Rename } from "../engine/renames.ts";

export interface Listed {
  readonly path: string;
  readonly kind: string;
}

/** One line's worth of moving: a path, or a folder with the files under it. */
export interface Move {
  readonly from: string;
  readonly to: string;
  /** A folder moved whole: the files (and symlinks) it took. */
  readonly files?: number;
}

export function describeMove(m: Move): string {
  if (m.files === undefined) return `${m.from} -> ${m.to}`;
  return `${m.from}/ -> ${m.to}/ (${m.files} ${m.files === 1 ? "file" : "files"})`;
}

/** The moves among `changes`, and the changes no move covers, in their order. */
export function movesOf<T extends Listed>(
  changes: readonly T[],
  renames: readonly Rename[] | undefined,
): { moves: Move[]; rest: T[] } {
  if (!renames || renames.length === 0) return { moves: [], rest: [...changes] };
  const gone = new Set(changes.filter((c) => c.kind === "gone").map((c) => c.path));
  const dirs = new Set(changes.filter((c) => c.kind === "dir").map((c) => c.path));
  const folders = new Map<string, { from: string; to: string; renames: Rename[] }>();
  const single: Rename[] = [];
  for (const r of renames) {
    const folder = folderOf(r, gone, dirs);
    if (folder === null) single.push(r);
    else {
      const key = `${folder.from}\0${folder.to}`;
      const group = folders.get(key) ?? { ...folder, renames: [] };
      group.renames.push(r);
      folders.set(key, group);
    }
  }
  const covered = new Set<string>();
  const moves: Move[] = [];
  for (const group of folders.values()) {
    const under = [...gone].filter((p) => p.startsWith(`${group.from}/`));
    const moved = new Set(group.renames.map((r) => r.from));
    // Whole only if everything removed under it went to the same place under the new name.
    const whole = under.every((p) => moved.has(p) || dirs.has(group.to + p.slice(group.from.length)));
    if (!whole) {
      single.push(...group.renames);
      continue;
    }
    moves.push({ from: group.from, to: group.to, files: group.renames.length });
    for (const p of [group.from, group.to, ...under, ...under.map((p) => group.to + p.slice(group.from.length))])
      covered.add(p);
  }
  for (const r of single) {
    moves.push({ from: r.from, to: r.to });
    covered.add(r.from).add(r.to);
  }
  moves.sort((a, b) => (a.from < b.from ? -1 : 1));
  return { moves, rest: changes.filter((c) => !covered.has(c.path)) };
}

/**
 * The outermost folder a rename moved with: `a/docs/x -> b/docs/x` is `a ->
 * b` when `a` was removed and `b` made, else `a/docs -> b/docs` when those
 * were; null for a path renamed where it stands.
 */
function folderOf(
  r: Rename,
  gone: ReadonlySet<string>,
  dirs: ReadonlySet<string>,
): { from: string; to: string } | null {
  const f = r.from.split("/");
  const t = r.to.split("/");
  let tail = 0;
  while (tail < Math.min(f.length, t.length) - 1 && f[f.length - 1 - tail] === t[t.length - 1 - tail]) tail++;
  for (let j = tail; j >= 1; j--) {
    const from = f.slice(0, f.length - j).join("/");
    const to = t.slice(0, t.length - j).join("/");
    if (from !== to && gone.has(from) && dirs.has(to)) return { from, to };
  }
  return null;
}
