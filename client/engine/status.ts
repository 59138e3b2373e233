/** What a sync would send and receive, found without changing the tree or the store (`ferry status`). */
import { type Cursor, ORIGIN } from "../../protocol/cursor.ts";
import { Scanner } from "../scan/scanner.ts";
import type { EngineContext } from "./context.ts";
import { type HelloAsk, sayHello } from "./hello.ts";
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
  let after = hello.resync ? ORIGIN : (store.position().pull?.cursor ?? ORIGIN);
  while (behind(after, hello.rev)) {
    const page = await ctx.call("changes", {
      after,
      hostId: store.hostId,
      limit: hello.limits.maxPageEntries,
      look: true,
    });
    for (const c of page.entries) {
      // A pull leaves what this host ignores alone (apply.ts).
      if (!ctx.ignore.ignoresPathOrAncestor(c.path, c.kind === "dir"))
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

/** True when a pull from `cursor` has something to read on a server at `serverRev`. */
export function behind(cursor: Cursor, serverRev: number): boolean {
  return cursor.path !== null || cursor.rev < serverRev;
}
