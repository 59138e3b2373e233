/**
 * The details of a `conflict` refusal of push (PROTOCOL.md §4.5 rules 7
 * and 8): each path another host changed since the pushing host last saw
 * it, which the pack would silently overwrite or delete. The server builds
 * the error here; a host reads the paths back to pull them and keep both.
 */
import { type ErrorDetails, ProtocolError } from "./errors.ts";

export interface Conflict {
  readonly path: string;
  /** The server rev of the state at `path` the pack would overwrite. */
  readonly rev: number;
  /**
   * Set when `path` is not in the pack but lies under this path, which the
   * pack turns into a file, symlink or tombstone (a subtree delete).
   */
  readonly under?: string;
}

/** Paths named in a conflict's message; the details list them all. */
const NAMED_IN_MESSAGE = 5;

export function conflictError(conflicts: readonly Conflict[]): ProtocolError {
  const named = conflicts
    .slice(0, NAMED_IN_MESSAGE)
    .map((c) => (c.under === undefined ? c.path : `${c.path} (under ${c.under})`));
  const more = conflicts.length > NAMED_IN_MESSAGE ? ` and ${conflicts.length - NAMED_IN_MESSAGE} more` : "";
  return new ProtocolError(
    "conflict",
    `changed on the server since this host last saw them: ${named.join(", ")}${more}`,
    { conflicts },
  );
}

/** The conflicts a `conflict` error's details list; entries of another shape are skipped. */
export function readConflicts(details: ErrorDetails): Conflict[] {
  const listed = Array.isArray(details.conflicts) ? (details.conflicts as unknown[]) : [];
  const out: Conflict[] = [];
  for (const item of listed) {
    if (typeof item !== "object" || item === null) continue;
    const { path, rev, under } = item as Record<string, unknown>;
    if (typeof path !== "string" || typeof rev !== "number") continue;
    out.push(typeof under === "string" ? { path, rev, under } : { path, rev });
  }
  return out;
}
