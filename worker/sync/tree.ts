/**
 * Tree shape rules for a pack, checked by apply.ts before anything is
 * written. The stored tree keeps one invariant: no live entry lies under a
 * live file or symlink. A path whose parent is absent or a tombstone is
 * tolerated (the host creates it as a directory), because a host may push a
 * new child in an earlier pack than its new parent directory.
 */
import { conflictError } from "../../protocol/conflict.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import type { PushEntry } from "../../protocol/push.ts";
import type { StoredEntry } from "./entries.ts";

/**
 * Bound on the summed length of a pack's distinct ancestors. A real tree's
 * packs share their directories and stay far below it; a pack of 10,000
 * unrelated 1,600-byte paths 800 levels deep would otherwise make the object
 * hold and look up gigabytes of ancestor names.
 */
export const MAX_ANCESTOR_CHARS = 8 * 1024 * 1024;

/** Proper ancestors of every live entry in the pack, each once; `payload_too_large` past the bound. */
export function ancestorsOf(entries: readonly PushEntry[]): Set<string> | ProtocolError {
  const out = new Set<string>();
  let chars = 0;
  for (const e of entries) {
    if (e.kind === "gone") continue;
    for (let end = e.path.lastIndexOf("/"); end > 0; end = e.path.lastIndexOf("/", end - 1)) {
      const ancestor = e.path.slice(0, end);
      // Everything above an ancestor already seen has been added with it.
      if (out.has(ancestor)) break;
      out.add(ancestor);
      chars += end;
      if (chars > MAX_ANCESTOR_CHARS) {
        return new ProtocolError("payload_too_large", "pack names too many distinct directories; split it", {
          field: "entries",
          limit: MAX_ANCESTOR_CHARS,
        });
      }
    }
  }
  return out;
}

/**
 * Refuses a pack that would leave a live entry under a live file or symlink:
 * `bad_request` when the pack itself makes the ancestor a file or symlink,
 * `conflict` (naming the ancestor and its rev) when the stored state does,
 * since that is another host's write the pushing host has not pulled yet.
 *
 * `changed` is the set of paths the pack really changes: a changed entry
 * that is not a directory replaces its stored subtree with tombstones.
 */
export function checkTree(
  entries: readonly PushEntry[],
  stored: ReadonlyMap<string, StoredEntry>,
  changed: ReadonlySet<string>,
): ProtocolError | null {
  const inPack = new Map(entries.map((e) => [e.path, e]));
  // For an ancestor already walked: whether the pack tombstones what lies under it.
  const killedBelow = new Map<string, boolean>();
  for (const e of entries) {
    if (e.kind === "gone") continue;
    const chain: string[] = [];
    let killed = false;
    for (let end = e.path.lastIndexOf("/"); end > 0; end = e.path.lastIndexOf("/", end - 1)) {
      const ancestor = e.path.slice(0, end);
      const known = killedBelow.get(ancestor);
      if (known !== undefined) {
        killed = known;
        break;
      }
      chain.push(ancestor);
    }
    for (const ancestor of chain.reverse()) {
      const packed = inPack.get(ancestor);
      const kept = stored.get(ancestor);
      const kind = packed?.kind ?? (killed ? "gone" : (kept?.kind ?? "gone"));
      if (kind === "file" || kind === "symlink") {
        return packed
          ? new ProtocolError("bad_request", `${e.path}: its ancestor ${ancestor} is a ${kind} in the same pack`, {
              path: e.path,
            })
          : conflictError([{ path: ancestor, rev: kept?.rev ?? 0 }]);
      }
      killed ||= packed !== undefined && packed.kind !== "dir" && changed.has(ancestor);
      killedBelow.set(ancestor, killed);
    }
  }
  return null;
}
