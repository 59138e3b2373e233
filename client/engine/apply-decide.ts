/**
 * The applier's first step (apply.ts): what is at a change's path now, on
 * disk and in the store, and what to do with the change (decide.ts).
 * Nothing is written here; a disk that moved since the store last saw it is
 * read again (the scanner's readState).
 */
import type { BigIntStats } from "node:fs";
import type { Change } from "../../protocol/changes.ts";
import type { Entry } from "../../protocol/entry.ts";
import { entrySignature, signatureMatches } from "../common/entry-state.ts";
import { trace, traceEntry } from "../common/trace.ts";
import { statKey } from "../scan/stat-key.ts";
import type { PathRecord } from "../store/store.ts";
import type { ApplyState } from "./apply-state.ts";
import type { EngineContext } from "./context.ts";
import { type Decision, decide, type MergeMode } from "./decide.ts";
import { lstatOrNull, RefusedPath } from "./disk.ts";

/** What the applier saw at a change's path, and its decision. */
export interface Look {
  readonly decision: Decision;
  readonly record: PathRecord | undefined;
  /** The path's lstat (null: nothing there, or not looked at) and its fingerprint. */
  readonly st: BigIntStats | null;
  readonly key: string | null;
  /** The disk is as the store's record says: nothing changed here since the store saw it. */
  readonly diskMatches: boolean;
  /** What is at the path (null: nothing), with its chunk sizes and the fingerprint to keep for it (null: read again next scan). */
  readonly current: Entry | null;
  readonly sizes: readonly number[];
  readonly stat: string | null;
}

/**
 * Looks at `c`'s path and decides. `ancestorsOk`: every ancestor is a
 * directory on disk (else nothing can be at the path, and it is not looked at).
 */
export function lookAndDecide(
  s: ApplyState,
  ctx: EngineContext,
  c: Change,
  mode: MergeMode,
  ancestorsOk: boolean,
): Look {
  const record = s.record(c.path);
  // A path with no record under a directory this pull made is taken for empty without a look
  // (ApplyState.underMadeDir): what appeared there since the mkdir is found when the change is placed.
  const look = ancestorsOk && !(record === undefined && s.underMadeDir(c.path));
  const st = look ? lstatOrNull(s.abs(c.path)) : null;
  const key = st ? statKey(st) : null;
  const diskMatches =
    st === null ? !record || record.entry.kind === "gone" : !!record && record.stat !== null && record.stat === key;
  let current: Entry | null;
  let changed: boolean;
  let sizes: readonly number[] = record?.sizes ?? [];
  let stat: string | null = key;
  if (diskMatches) {
    current = record && record.entry.kind !== "gone" ? record.entry : null;
    changed = !!record && ctx.isPending(record.hostRev);
  } else {
    // The disk moved since the store last saw it: read what is there now.
    s.flush();
    const now = st ? ctx.scanner.readState(c.path) : null;
    current = now?.entry ?? null;
    sizes = now?.sizes ?? [];
    stat = now?.stat ?? null;
    const sameAsRecord =
      !!record && !!now && record.entry.kind !== "gone" && signatureMatches(record.entry, entrySignature(now.entry));
    changed = sameAsRecord ? ctx.isPending(record.hostRev) : true;
  }
  const local = { current, changed, agreed: record?.agreed ?? null };
  // A reconcile's changes carry the server's earlier states (decide.ts).
  const decision = decide(
    c,
    c.past ? { ...local, past: c.past, known: !!record && record.agreed !== null } : local,
    mode,
  );
  trace(
    () =>
      `apply ${c.path} ${traceEntry(c)} rev ${c.rev} -> ${decision}: here ${traceEntry(current)} changed ${changed} ` +
      `record ${traceEntry(record?.entry)} h${record?.hostRev} s${record?.serverRev} diskMatches ${diskMatches}` +
      (c.past ? ` past [${c.past.map(traceEntry).join(" ")}]` : ""),
  );
  return { decision, record, st, key, diskMatches, current, sizes, stat };
}

/**
 * A symlink ancestor the server itself holds (synced, unchanged here) with
 * entries under it is a server that contradicts itself: refused, never
 * written through nor replaced. A symlink that is a local change is not
 * refused: the server's entries win the path and the link is kept as a copy.
 */
export function refuseUnderSyncedLink(
  s: ApplyState,
  ctx: EngineContext,
  path: string,
  blocked: { readonly at: string; readonly symlink: boolean },
): void {
  if (!blocked.symlink) return;
  const st = lstatOrNull(s.abs(blocked.at));
  const record = s.record(blocked.at);
  if (st && record && !ctx.isPending(record.hostRev) && record.stat === statKey(st)) {
    throw new RefusedPath(path, `its ancestor '${blocked.at}' is a symlink`);
  }
}
