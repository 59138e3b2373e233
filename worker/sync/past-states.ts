/**
 * A path's earlier states, from `versions` (schema migration 3), for a
 * reconciling host (changes with `history`, PROTOCOL.md §4.6): a local state
 * equal to one the server had before is stale and takes the server's; only
 * a state the server never had is local work (client/engine/decide.ts).
 */
import { type Change, MAX_PAST_STATES } from "../../protocol/changes.ts";
import type { Entry } from "../../protocol/entry.ts";
import { toHex } from "../../protocol/hash.ts";
import type { Db } from "./db.ts";
import { ENTRY_COLUMNS, type EntryRow, jsonWindows, rowToEntry } from "./entries.ts";

/** Version rows read per path at most: duplicates of a state (a file toggled back and forth) are dropped after. */
const ROWS_PER_PATH = 4 * MAX_PAST_STATES;

/**
 * Each change with its `past`: the distinct states its path had before the
 * current one, most recent first, at most MAX_PAST_STATES, with a `gone`
 * among them when the path was deleted and later written again. One
 * statement per window of paths, a seek per path on the (path, rev) key.
 */
export function withPastStates(db: Db, changes: readonly Change[]): Change[] {
  const rowsByPath = new Map<string, (EntryRow & { until_rev: number })[]>();
  for (const json of jsonWindows(changes.map((c) => c.path))) {
    const { rows } = db.exec<EntryRow & { until_rev: number }>(
      `SELECT ${ENTRY_COLUMNS}, until_rev FROM (
         SELECT v.*, row_number() OVER (PARTITION BY v.path ORDER BY v.rev DESC) AS n
         FROM json_each(?1) j CROSS JOIN versions v ON v.path = j.value)
       WHERE n <= ?2 ORDER BY path, rev DESC`,
      json,
      ROWS_PER_PATH,
    );
    for (const row of rows) {
      const list = rowsByPath.get(row.path);
      if (list) list.push(row);
      else rowsByPath.set(row.path, [row]);
    }
  }
  return changes.map((c) => {
    const past = pastOf(c, rowsByPath.get(c.path) ?? []);
    return past.length === 0 ? c : { ...c, past };
  });
}

/** `rows` newest first. A version that ended at another rev than the next state began leaves a gap: the path was gone. */
function pastOf(current: Change, rows: readonly (EntryRow & { until_rev: number })[]): Entry[] {
  const seen = new Set<string>([stateKey(current)]);
  const out: Entry[] = [];
  const add = (e: Entry) => {
    const key = stateKey(e);
    if (seen.has(key) || out.length >= MAX_PAST_STATES) return;
    seen.add(key);
    out.push(e);
  };
  let nextRev = current.kind === "gone" ? null : current.rev;
  for (const row of rows) {
    if (nextRev !== null && row.until_rev !== nextRev) add({ kind: "gone", path: current.path });
    const { rev: _rev, origin: _origin, ...entry } = rowToEntry(row);
    add(entry as Entry);
    nextRev = row.rev;
  }
  return out;
}

/** What tells two states apart for a host (client/entry-state.ts): kind, mode, content, target; never mtime. */
function stateKey(e: Entry): string {
  switch (e.kind) {
    case "file":
      return `file:${e.mode}:${e.chunks.map(toHex).join("")}`;
    case "dir":
      return `dir:${e.mode}`;
    case "symlink":
      return `symlink:${e.target}`;
    case "gone":
      return "gone";
  }
}
