/** What a sync would send and receive, found without changing the tree or the store (`ferry status`). */
import type { Change } from "../../protocol/changes.ts";
import { type Cursor, ORIGIN } from "../../protocol/cursor.ts";
import type { Entry } from "../../protocol/entry.ts";
import type { HelloResponse } from "../../protocol/hello.ts";
import { Scanner, type ScanResult } from "../scan/scanner.ts";
import type { HostStore } from "../store/store.ts";
import type { EngineContext } from "./context.ts";
import { type HelloAsk, sayHello } from "./hello.ts";
import { rulesLetGo } from "./ignored-left.ts";
import { type Rename, statusRenames } from "./renames.ts";
import { judgeBothSides, keepJudged } from "./status-judge.ts";
import { rulesAfterPull } from "./status-rules.ts";
import { whileAnswering } from "./while-answering.ts";

export interface StatusReport {
  /** Local changes not yet on the server. */
  readonly toPush: { readonly path: string; readonly kind: string }[];
  /** Server changes not yet here. */
  readonly toPull: { readonly path: string; readonly kind: string; readonly rev: number }[];
  /** Paths of `toPush` and `toPull` that moved with their content unchanged (renames.ts). */
  readonly renamed: { readonly toPush: readonly Rename[]; readonly toPull: readonly Rename[] };
  /** Paths on both sides that a sync would keep twice (the server's at the path, the local one as a conflict copy); in neither list above. */
  readonly conflicts: { readonly path: string; readonly kind: string }[];
  readonly serverRev: number;
  readonly resync: boolean;
  /** The sync would compare the whole state (a first meeting, a lost store): a push pulls too. */
  readonly reconcile: boolean;
  readonly roundTrips: number;
}

export interface StatusLook {
  /** The directory has yet to meet its workspace (sync.ts FirstMeeting): a reconcile keeps both sides of what differs. */
  readonly meets: boolean;
}

export async function lookStatus(
  ctx: EngineContext,
  ask: Omit<HelloAsk, "look">,
  look: StatusLook = { meets: false },
): Promise<StatusReport> {
  const { store } = ctx;
  // Hello is answered while the tree is scanned, as in a sync (scan-stamp.ts). A scanner of
  // its own: the engine's removes stale temporary files, and a look removes nothing.
  const helloing = sayHello(ctx, { ...ask, look: true });
  const scanned = await new Scanner(ctx.root, store, ctx.ignore).scanPausing(whileAnswering(helloing).turn, {});
  const hello = await helloing;
  let local = localChanges(store, hello, scanned);
  // As the sync decides (sync.ts catchUpMode): a store that never pulled, with work, from a workspace
  // with content (a first meeting, or a lost store), or a server restored, compares the whole state.
  const position = store.position();
  const reconciles = hello.acked.rev > position.hostRev || (position.pull === null && hello.rev > 0 && local.size > 0);
  const mode = hello.resync ? "local-wins" : reconciles && look.meets ? "meet" : "merge";
  // Paths left alone under other rules: the sync compares the whole state (ignored-left.ts), and so does
  // this look, listing what it would bring: every server state this host does not hold as agreed.
  let lettingGo = !hello.resync && rulesLetGo(store, ctx.ignore);
  let changes = await readPending(ctx, hello, { lettingGo, history: reconciles || hello.resync || lettingGo });
  // A `.ferryignore` the pull brings rules what comes after it (and the push's scan), and may let go of
  // what was left alone: the look judges by the rules it makes.
  const brought = await rulesAfterPull(ctx, changes, (c) => !local.has(c.path) && !heldAsAgreed(store, c));
  const rules = brought ?? ctx.ignore;
  if (brought && brought.digest() !== ctx.ignore.digest()) {
    local = localChanges(store, hello, new Scanner(ctx.root, store, brought).scan());
  }
  const left = store.ignoredLeft();
  if (!hello.resync && !lettingGo && left !== null && rules.digest() !== left) {
    lettingGo = true;
    changes = await readPending(ctx, hello, { lettingGo, history: true });
  }
  const server = new Map<string, Change>();
  const toPull: StatusReport["toPull"] = [];
  for (const c of changes) {
    // A pull leaves what this host ignores alone (apply.ts).
    if (rules.ignoresPathOrAncestor(c.path, c.kind === "dir")) continue;
    if (lettingGo && heldAsAgreed(store, c)) continue;
    // A deletion of a path this folder never held (nor holds now) changes nothing here: a pull passes it by.
    if (c.kind === "gone" && !local.has(c.path) && neverHeld(store, c.path)) continue;
    toPull.push({ path: c.path, kind: c.kind, rev: c.rev });
    server.set(c.path, c);
  }
  const judged = judgeBothSides(store, { local, server }, mode);
  const toPush = [...local.values()]
    .map((e) => ({ path: e.path, kind: e.kind as string }))
    .sort((a, b) => (a.path < b.path ? -1 : 1));
  const pushes = keepJudged(toPush, server, judged.push);
  const pulls = keepJudged(toPull, local, judged.pull);
  return {
    toPush: pushes,
    toPull: pulls,
    renamed: statusRenames(store, { local, server, pushes, pulls }),
    conflicts: toPush.filter((c) => judged.conflicts.has(c.path)),
    serverRev: hello.rev,
    resync: hello.resync,
    reconcile: reconciles || hello.resync,
    roundTrips: ctx.report.roundTrips,
  };
}

/** Local changes a sync would push: pending ones and what the scan found, but what the rules now ignore. */
function localChanges(store: HostStore, hello: HelloResponse, scan: ScanResult): Map<string, Entry> {
  const local = new Map<string, Entry>();
  for (const r of store.pending(hello.acked.rev, Number.MAX_SAFE_INTEGER)) local.set(r.entry.path, r.entry);
  for (const c of scan.changes) local.set(c.entry.path, c.entry);
  // Pending before the rules ignored them: a sync forgets them rather than push them (scanner.ts `dropped`).
  for (const path of scan.dropped) local.delete(path);
  return local;
}

/**
 * The server changes a sync would read: after the pull cursor, or the whole
 * state (from the origin, this host's own changes included) when it
 * compares the whole state; with the server's earlier states when it
 * judges by them (decide.ts).
 */
async function readPending(
  ctx: EngineContext,
  hello: HelloResponse,
  { lettingGo, history }: { readonly lettingGo: boolean; readonly history: boolean },
): Promise<Change[]> {
  const changes: Change[] = [];
  let after = hello.resync || lettingGo ? ORIGIN : (ctx.store.position().pull?.cursor ?? ORIGIN);
  while (behind(after, hello.rev)) {
    const page = await ctx.call("changes", {
      after,
      // Its own changes are skipped as a pull skips them, but not by a whole-state look: it left them too.
      ...(lettingGo ? {} : { hostId: ctx.store.hostId }),
      limit: hello.limits.maxPageEntries,
      look: true,
      ...(history ? { history: true } : {}),
    });
    // As a reconcile's pull takes them (pull.ts): a change without `past` had no earlier state.
    for (const c of page.entries) changes.push(history && !c.past ? { ...c, past: [] } : c);
    if (!page.more) break;
    after = page.next;
  }
  return changes;
}

/** The store holds `c` already: the state it last agreed with the server is `c`'s rev or later, or both are gone. */
function heldAsAgreed(store: HostStore, c: Change): boolean {
  const record = store.get(c.path);
  if (c.kind === "gone") return record === undefined || record.entry.kind === "gone";
  return record !== undefined && record.serverRev >= c.rev;
}

/** The store has no live state at `path`: this folder never held it, or agreed it gone. */
function neverHeld(store: HostStore, path: string): boolean {
  const record = store.get(path);
  return record === undefined || record.entry.kind === "gone";
}

/** True when a pull from `cursor` has something to read on a server at `serverRev`. */
export function behind(cursor: Cursor, serverRev: number): boolean {
  return cursor.path !== null || cursor.rev < serverRev;
}
