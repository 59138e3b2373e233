/**
 * What to do with one server change at a path, given what the host has
 * there. Pure: the applier gathers the inputs (reading the disk where the
 * store's fingerprint no longer matches) and carries the decision out.
 */
import type { Entry } from "../../protocol/entry.ts";
import { sameContent, sameState, signatureMatches } from "../common/entry-state.ts";

/**
 * - `apply`: write the server's state to disk.
 * - `adopt`: the disk already holds it; only the store learns the server rev.
 * - `metadata`: the disk holds the same bytes; only the server's mode and
 *   mtime are set, in place (an mtime-only change, or a lost store's tree).
 * - `keep-local`: the local state wins and is (re)stamped for push, with the
 *   server's rev as its base so the push is not a conflict.
 * - `conflict`: keep the local version as a conflict copy, then apply.
 */
export type Decision = "apply" | "adopt" | "metadata" | "keep-local" | "conflict";

/**
 * - `merge`: the normal case and reconciles after a lost or older host store:
 *   the server's change wins over an unchanged local path; both changed is a
 *   conflict.
 * - `local-wins`: after the server was restored from an older copy, the host's
 *   differing state is newer and is pushed back.
 * - `meet`: a directory's first sync with a workspace (no common past): as
 *   `merge`, but a local state the server never had is never taken for an
 *   edit of the server's, whatever the mtimes say: where both hold something
 *   different, the local one is kept as a conflict copy (decideFromHistory).
 */
export type MergeMode = "merge" | "local-wins" | "meet";

export interface LocalSide {
  /** What is on disk now (null: nothing). */
  readonly current: Entry | null;
  /** The local state differs from what was last agreed with the server (unpushed). */
  readonly changed: boolean;
  /** Signature of the state last agreed with the server, when known. */
  readonly agreed: Uint8Array | null;
  /**
   * In a reconcile: the states the server had at this path before its
   * current one (changes with `history`, PROTOCOL.md §4.6).
   */
  readonly past?: readonly Entry[];
  /** In a reconcile: the host has a state it agreed with the server for this path (a tombstone included). */
  readonly known?: boolean;
}

export function decide(server: Entry, local: LocalSide, mode: MergeMode): Decision {
  const here = local.current;
  if (here === null ? server.kind === "gone" : sameState(here, server)) return "adopt";
  // Same bytes, other mode or mtime: the server's win unless this host changed them since it agreed.
  const unagreed = !local.changed || local.agreed === null;
  if (
    here !== null &&
    sameContent(here, server) &&
    unagreed &&
    mode !== "local-wins" &&
    !modeNeverHad(here, server, local, mode)
  )
    return "metadata";
  const fromHistory = local.past ? decideFromHistory(server, local, local.past, mode) : null;
  if (fromHistory) return fromHistory;
  if (!local.changed) return mode === "local-wins" && here !== null ? "keep-local" : "apply";
  // The host changed this path and the server's state differs from it.
  if (signatureMatches(server, local.agreed)) return "keep-local"; // the server did not move since we agreed
  if (here === null) return "apply"; // our deletion against their change: keep their data
  if (server.kind === "gone") return "keep-local"; // their deletion against our change: keep ours
  if (mode === "local-wins") return savedAfter(server, here) ? "conflict" : "keep-local";
  if (here.kind === "dir" && server.kind === "dir") return "keep-local"; // only modes differ: no data at stake
  if (sameContent(here, server)) return "keep-local"; // only mode or mtime differ: no data at stake
  return "conflict";
}

/**
 * A reconcile (a lost or older store, or a restored server) judges a path
 * whose local state the host cannot vouch for against the server's history
 * (PROTOCOL.md §9.3): a state the server had before is stale and takes the
 * server's current one, deletions included, without a conflict copy; a
 * state it never had is local work, kept at its path and pushed. A local
 * change the host made after agreeing with the server is judged as always
 * (null: the rules of `decide`).
 */
function decideFromHistory(server: Entry, local: LocalSide, past: readonly Entry[], mode: MergeMode): Decision | null {
  const here = local.current;
  if (local.known && local.changed) return null;
  // Stale: a state the server had, by content and mode (a file's mtime aside: a pulled copy keeps the server's).
  const stale =
    here === null
      ? past.some((p) => p.kind === "gone")
      : past.some((p) => (sameContent(here, p) && sameMode(here, p)) || (here.kind !== "file" && sameState(here, p)));
  if (stale) return "apply";
  // A first meeting: nothing here was ever agreed, so the rules of `decide` judge it as a local change
  // (changed, agreed null): a conflict copy where the server holds something else, never a silent win.
  if (mode === "meet" && !local.known) return null;
  // What the host agreed with (a file, or a deletion: an acknowledged
  // tombstone) the server had; unless the server lost it with a restore
  // (`local-wins`), the server's newer state wins.
  // A live local file is still not pushed over a file saved after it (another host's, since the restore).
  if (local.known) {
    if (mode !== "local-wins") return "apply";
    return here !== null && savedAfter(server, here) ? "conflict" : "keep-local";
  }
  // Nothing here and no record: this host never had it.
  if (here === null) return "apply";
  // A state the server never had, with no record of what the host last
  // agreed (a lost store): local work. It wins, unless it cannot be an edit
  // of the server's state because that state was saved after it.
  return savedAfter(server, here) ? "conflict" : "keep-local";
}

/**
 * In a lost store's reconcile (no record of the path), a file holding the
 * server's bytes with a mode the server never had for them: a chmod made
 * while the store was lost. A state is content and mode, so this is local
 * work (PROTOCOL.md §9.3 rule 5), kept and pushed, not a stale copy whose
 * mode the server's replaces. A first meeting leaves modes to the server:
 * two trees checked out apart differ by umask, not by intent.
 */
function modeNeverHad(here: Entry, server: Entry, local: LocalSide, mode: MergeMode): boolean {
  if (mode !== "merge" || !local.past || local.known || here.kind !== "file") return false;
  return ![server, ...local.past].some((p) => sameContent(here, p) && sameMode(here, p));
}

/** Same permission bits, setuid and setgid aside: a host never applies those (PROTOCOL.md §9.3), so its copy lacks them. */
function sameMode(here: Entry, p: Entry): boolean {
  return here.kind === "file" && p.kind === "file" && (here.mode & ~0o6000) === (p.mode & ~0o6000);
}

/**
 * The server's file was saved after the local one (by modification time):
 * the local file cannot be an edit of it, so the two are concurrent
 * versions, and as for any concurrent edit the local one is kept as a
 * conflict copy beside the server's. A lost store, or a server restored
 * from an older copy, leaves no better witness of what the host had seen; a
 * local file saved later may still have missed the server's, which then
 * stays in the path's history (PROTOCOL.md §9.3).
 */
function savedAfter(server: Entry, here: Entry): boolean {
  return server.kind === "file" && here.kind === "file" && server.mtime > here.mtime && !sameContent(here, server);
}
