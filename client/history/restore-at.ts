/**
 * A restore as one operation of a host (Workspace.restore, which runs it in
 * its queue: in a `sync --watch`, as one of the watch's turns, after the
 * sync it was in has pushed what it had). In order: push what the
 * directory holds, so that what the restore replaces is in the history;
 * read the path's states at the rev and write them (restore-tree.ts), local
 * work in the way kept as a conflict copy (restore-guard.ts); then push the
 * restored paths, unless asked not to (the next sync does).
 */
import type { SyncReport } from "../engine/report.ts";
import type { SyncEngine } from "../engine/sync.ts";
import type { KeptCopy } from "./restore-guard.ts";
import { RestoreGuard } from "./restore-guard.ts";
import { readSnapshot, restoreTree } from "./restore-tree.ts";

export interface RestoreRequest {
  /** A workspace path (clean: no leading slash, no `.` or `..`). */
  readonly path: string;
  readonly rev: number;
  /** Push the restored paths at once (default true). */
  readonly push?: boolean;
}

export interface RestoreReport {
  readonly path: string;
  readonly rev: number;
  /** Paths written. */
  readonly paths: number;
  readonly bytes: number;
  /** Local work that was in the way, moved aside (and pushed with the rest, unless ignored). */
  readonly kept: readonly KeptCopy[];
  /** The push that came first. */
  readonly before: SyncReport;
  /** The push of the restored paths, or null with `push: false`. */
  readonly after: SyncReport | null;
}

/** The path did not exist at that rev. */
export class NothingAtRevError extends Error {
  readonly code = "not_found";
  constructor(path: string, rev: number) {
    super(`${path} did not exist at rev ${rev} (see ferry log)`);
    this.name = "NothingAtRevError";
  }
}

/** Restores `request.path` as of `request.rev` into the engine's root; `hostTag` names conflict copies. */
export async function restoreAt(engine: SyncEngine, request: RestoreRequest, hostTag: () => string) {
  const before = await engine.sync({ pull: false });
  const states = await readSnapshot(engine.transport, request.path, request.rev);
  if (states.length === 0) throw new NothingAtRevError(request.path, request.rev);
  const guard = new RestoreGuard(engine.root, engine.store, hostTag());
  const restored = await restoreTree(engine.root, engine.transport, states, guard);
  const after = request.push === false ? null : await engine.sync({ pull: false });
  const report: RestoreReport = {
    path: request.path,
    rev: request.rev,
    paths: restored.written.length,
    bytes: restored.bytes,
    kept: restored.kept,
    before,
    after,
  };
  return report;
}
