/**
 * A path's earlier states, from `versions` (schema migration 3), for a
 * reconciling host (changes with `history`, PROTOCOL.md §4.6): a local state
 * equal to one the server had before is stale and takes the server's; only
 * a state the server never had is local work (client/engine/decide.ts).
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { type Change, MAX_PAST_STATES } from "../../protocol/changes.ts";
import type { Entry } from "../../protocol/entry.ts";
import { toHex } from "../../protocol/hash.ts";
import type { Db } from "./db.ts";
import {
  type BulkEntryRow,
  boundedChunks,
  entryEncodedSize,
  jsonWindows,
  rowToEntry,
  withChunkList,
} from "./entries.ts";

/** Version rows read per path at most: duplicates of a state (a file toggled back and forth) are dropped after. */
const ROWS_PER_PATH = 4 * MAX_PAST_STATES;

type VersionRow = BulkEntryRow & { until_rev: number };

/**
 * The longest prefix of `changes` whose entries and earlier states fit
 * `budget` bytes (at least one change), each with its `past`: the distinct
 * states its path had before the current one, most recent first, at most
 * MAX_PAST_STATES, with a `gone` among them when the path was deleted and
 * later written again. One statement per window of paths, a seek per path
 * on the (path, rev) key; long chunk lists (entries.ts) are read one at a
 * time, and only while the page has room, so the first change's `past`
 * may be cut short when its states alone pass the budget.
 */
export function withPastStates(db: Db, changes: readonly Change[], budget: number): Change[] {
  const rowsByPath = new Map<string, VersionRow[]>();
  for (const json of jsonWindows(changes.map((c) => c.path))) {
    const { rows } = db.exec<VersionRow>(
      `SELECT * FROM (
         SELECT v.path, v.rev, v.kind, v.mode, v.mtime, v.size, ${boundedChunks("v.chunks")}, v.target, v.origin,
           v.until_rev, row_number() OVER (PARTITION BY v.path ORDER BY v.rev DESC) AS n
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
  const out: Change[] = [];
  let bytes = 0;
  for (const c of changes) {
    bytes += entryEncodedSize(c);
    if (out.length > 0 && bytes > budget) break;
    const room = { left: budget - bytes, first: out.length === 0 };
    const past = pastOf(db, c, rowsByPath.get(c.path) ?? [], room);
    if (room.left < 0 && !room.first) break;
    bytes = budget - room.left;
    out.push(past.length === 0 ? c : { ...c, past });
  }
  return out;
}

/**
 * `rows` newest first. A version that ended at another rev than the next
 * state began leaves a gap: the path was gone. Spends `room.left` bytes;
 * the first change of a page stops adding states where its room ends.
 */
function pastOf(db: Db, current: Change, rows: readonly VersionRow[], room: { left: number; first: boolean }): Entry[] {
  const seen = new Set<string>([stateKey(current)]);
  const out: Entry[] = [];
  const add = (e: Entry) => {
    const key = stateKey(e);
    if (seen.has(key) || out.length >= MAX_PAST_STATES) return;
    seen.add(key);
    out.push(e);
    room.left -= entryEncodedSize(e);
  };
  let nextRev = current.kind === "gone" ? null : current.rev;
  for (const row of rows) {
    // Out of room: a later change of the page is left for the next page, the first one's past ends here.
    if (room.left < 0 || out.length >= MAX_PAST_STATES) break;
    if (nextRev !== null && row.until_rev !== nextRev) add({ kind: "gone", path: current.path });
    const { rev: _rev, origin: _origin, ...entry } = rowToEntry(withChunkList(db, row, "versions"));
    add(entry as Entry);
    nextRev = row.rev;
  }
  return out;
}

/** What tells two states apart for a host (client/common/entry-state.ts): kind, mode, content, target; never mtime. */
function stateKey(e: Entry): string {
  switch (e.kind) {
    case "file":
      return `file:${e.mode}:${contentDigest(e.chunks)}`;
    case "dir":
      return `dir:${e.mode}`;
    case "symlink":
      return `symlink:${e.target}`;
    case "gone":
      return "gone";
  }
}

/**
 * A file's content as SHA-256 over its chunk list: a list may hold 60,000
 * hashes, and a key of their hex (a string per hash, joined) cost seconds
 * of CPU, mostly collecting garbage, for a few such files.
 */
function contentDigest(chunks: readonly Uint8Array[]): string {
  const h = sha256.create();
  for (const c of chunks) h.update(c);
  return `${chunks.length}:${toHex(h.digest())}`;
}
