/** What a sync would send and receive, found without changing the tree or the store (`ferry status`). */
import type { Change } from "../../protocol/changes.ts";
import { type Cursor, ORIGIN } from "../../protocol/cursor.ts";
import { Scanner } from "../scan/scanner.ts";
import type { HostStore } from "../store/store.ts";
import type { EngineContext } from "./context.ts";
import { type HelloAsk, sayHello } from "./hello.ts";
import { rulesLetGo } from "./ignored-left.ts";
import { whileAnswering } from "./while-answering.ts";

export interface StatusReport {
  /** Local changes not yet on the server. */
  readonly toPush: { readonly path: string; readonly kind: string }[];
  /** Server changes not yet here. */
  readonly toPull: { readonly path: string; readonly kind: string; readonly rev: number }[];
  readonly serverRev: number;
  readonly resync: boolean;
  readonly roundTrips: number;
}

export async function lookStatus(ctx: EngineContext, ask: Omit<HelloAsk, "look">): Promise<StatusReport> {
  const { store } = ctx;
  // Hello is answered while the tree is scanned, as in a sync (scan-stamp.ts). A scanner of
  // its own: the engine's removes stale temporary files, and a look removes nothing.
  const helloing = sayHello(ctx, { ...ask, look: true });
  const scan = await new Scanner(ctx.root, store, ctx.ignore).scanPausing(whileAnswering(helloing).turn, {});
  const hello = await helloing;
  const toPush = new Map<string, string>();
  for (const r of store.pending(hello.acked.rev, Number.MAX_SAFE_INTEGER)) toPush.set(r.entry.path, r.entry.kind);
  for (const c of scan.changes) toPush.set(c.entry.path, c.entry.kind);
  // Pending before the rules ignored them: a sync forgets them rather than push them (scanner.ts `dropped`).
  for (const path of scan.dropped) toPush.delete(path);
  const toPull: StatusReport["toPull"] = [];
  // Paths left alone under other rules: the sync compares the whole state (ignored-left.ts), and so does
  // this look, listing what it would bring: every server state this host does not hold as agreed.
  const lettingGo = !hello.resync && rulesLetGo(store, ctx.ignore);
  let after = hello.resync || lettingGo ? ORIGIN : (store.position().pull?.cursor ?? ORIGIN);
  while (behind(after, hello.rev)) {
    const page = await ctx.call("changes", {
      after,
      // Its own changes are skipped as a pull skips them, but not by a whole-state look: it left them too.
      ...(lettingGo ? {} : { hostId: store.hostId }),
      limit: hello.limits.maxPageEntries,
      look: true,
    });
    for (const c of page.entries) {
      // A pull leaves what this host ignores alone (apply.ts).
      if (ctx.ignore.ignoresPathOrAncestor(c.path, c.kind === "dir")) continue;
      if (lettingGo && heldAsAgreed(store, c)) continue;
      toPull.push({ path: c.path, kind: c.kind, rev: c.rev });
    }
    if (!page.more) break;
    after = page.next;
  }
  return {
    toPush: [...toPush].map(([path, kind]) => ({ path, kind })).sort((a, b) => (a.path < b.path ? -1 : 1)),
    toPull,
    serverRev: hello.rev,
    resync: hello.resync,
    roundTrips: ctx.report.roundTrips,
  };
}

/** The store holds `c` already: the state it last agreed with the server is `c`'s rev or later, or both are gone. */
function heldAsAgreed(store: HostStore, c: Change): boolean {
  const record = store.get(c.path);
  if (c.kind === "gone") return record === undefined || record.entry.kind === "gone";
  return record !== undefined && record.serverRev >= c.rev;
}

/** True when a pull from `cursor` has something to read on a server at `serverRev`. */
export function behind(cursor: Cursor, serverRev: number): boolean {
  return cursor.path !== null || cursor.rev < serverRev;
}
