/**
 * What a sync would do with a path that has a change on both sides, for
 * `status` and `--dry-run`: the same `decide` a pull applies (decide.ts),
 * given what the look found, so that a look says what the run would do. A
 * first meeting (a directory that holds files meeting a workspace that
 * holds files) adopts what is alike, takes the server's mode for the same
 * bytes and keeps both sides of what differs (a conflict copy); later syncs
 * merge as always.
 */
import type { Change } from "../../protocol/changes.ts";
import type { Entry } from "../../protocol/entry.ts";
import type { HostStore } from "../store/store.ts";
import { decide, type MergeMode } from "./decide.ts";

export interface BothSides {
  /** The local state each path to push has now (a deletion as `gone`). */
  readonly local: ReadonlyMap<string, Entry>;
  /** The server's change for each path to pull. */
  readonly server: ReadonlyMap<string, Change>;
}

/** Where each path on both sides ends up: pushed, pulled, both (a conflict), or neither (alike). */
export interface Judged {
  readonly push: ReadonlySet<string>;
  readonly pull: ReadonlySet<string>;
  readonly conflicts: ReadonlySet<string>;
}

export function judgeBothSides(store: HostStore, sides: BothSides, mode: MergeMode): Judged {
  const push = new Set<string>();
  const pull = new Set<string>();
  const conflicts = new Set<string>();
  for (const [path, here] of sides.local) {
    const c = sides.server.get(path);
    if (c === undefined) continue;
    const record = store.get(path);
    const local = { current: here.kind === "gone" ? null : here, changed: true, agreed: record?.agreed ?? null };
    const decision = decide(
      c,
      c.past ? { ...local, past: c.past, known: !!record && record.agreed !== null } : local,
      mode,
    );
    if (decision === "conflict") conflicts.add(path);
    else if (decision === "keep-local") push.add(path);
    else if (decision === "apply" || decision === "metadata") pull.add(path);
    // "adopt": the disk holds the server's state already: nothing moves.
  }
  return { push, pull, conflicts };
}

/** Paths on both sides go where `judged` says; the others stay where they are. */
export function keepJudged<T extends { readonly path: string }>(
  items: readonly T[],
  other: ReadonlyMap<string, unknown>,
  goes: ReadonlySet<string>,
): T[] {
  return items.filter((c) => !other.has(c.path) || goes.has(c.path));
}
