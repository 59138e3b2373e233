/**
 * Server paths this host leaves alone because it ignores them: a record
 * the scan forgets once the rules ignore its path (scanner.ts `dropped`,
 * never deleted on the server), and a server change a pull skips (apply.ts).
 * Nothing about them is kept but the fact, and the rules it happened under
 * (HostStore.ignoredLeft): once the rules differ, some of those paths may
 * no longer be ignored, and only a compare of the whole state with the
 * server can find them (sync.ts `pullWhatRulesLetGo`, status.ts). Kept in
 * the store, so that a rule removed between two commands lets them go as
 * one removed under a running watch does: a file deleted here while it was
 * ignored is pulled back, never left missing with the store believing it
 * is in sync.
 */
import type { IgnoreRules } from "../scan/ignore-rules.ts";
import type { HostStore } from "../store/store.ts";
import type { EngineContext } from "./context.ts";

/**
 * A pull skipped a change to an ignored path: noted under the rules as
 * they are now, unless something left earlier is noted already (under
 * other rules, its compare is still owed; under these, it is the same note).
 */
export function leftByPull(ctx: EngineContext): void {
  ctx.leftIgnoredUnder ??= ctx.ignore.digest();
  if (ctx.store.ignoredLeft() === null) ctx.store.setIgnoredLeft(ctx.leftIgnoredUnder);
}

/** The scan forgot records of paths the rules (`digest`) ignore now: noted as a pull's skip is. */
export function leftByScan(store: HostStore, digest: string): void {
  if (store.ignoredLeft() === null) store.setIgnoredLeft(digest);
}

/** Paths were left alone under rules other than these: what they no longer ignore is to be compared. */
export function rulesLetGo(store: HostStore, ignore: IgnoreRules): boolean {
  const left = store.ignoredLeft();
  return left !== null && left !== ignore.digest();
}
