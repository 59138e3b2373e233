/**
 * The watch loop (`ferry sync --watch`, `Workspace.watch`): once the file
 * watcher is ready, a first full sync; then keeps the directory live until
 * the signal aborts.
 *
 * - Local changes: file events (chokidar) are collected until the tree is
 *   quiet, and a file still being written until it has settled (settle.ts);
 *   only those paths are rescanned and stamped, and a sync without a full
 *   scan sends them. Events that stamp nothing (this host's own pulls
 *   landing on disk) cost no round trip.
 * - Server changes: over a transport the server can poke (Transport.listen:
 *   the WebSocket one), a poke for a rev this host has not seen starts a
 *   sync (which pulls); after a reconnect the host syncs once, since pokes
 *   may have been missed meanwhile. A slow poll (`pollMs`) is the safety
 *   net; over HTTP it is the only way.
 * - Missed file events: chokidar's raw events name paths it dropped (a
 *   chmod, which leaves mtime alone); a new directory is looked at again
 *   once its own watch is surely in place (a file written into it at once
 *   has no watcher yet); and once the tree has been quiet for QUIET_SCAN_MS
 *   after local events, the whole tree is scanned (the stat cache makes it
 *   cheap; at most a twentieth of the time is spent so), so what every
 *   other path missed is sent within seconds, not at the RESCAN_MS rescan.
 *
 * Syncs never overlap: what arrives during one is folded into the next.
 * Other operations on the same workspace while it watches (a `ferry sync`
 * served by the watch, cli/resident-server.ts) take turns with them
 * (`Turns`): each runs alone, between two of the watch's syncs.
 */

import { basename, join, relative, sep } from "node:path";
import { ruleFileDir } from "../scan/ignore-rules.ts";
import type { SyncReport } from "./report.ts";
import { Settler } from "./settle.ts";
import type { SyncEngine } from "./sync.ts";
import { SyncQueue } from "./watch-queue.ts";

/**
 * How often the whole tree is scanned (cheap: the stat cache) for what the
 * watcher missed, such as events dropped by an overflowing inotify queue.
 */
const RESCAN_MS = 5 * 60_000;
/** A new directory's paths are rescanned this long after it appears. */
const NEW_DIR_RECHECK_MS = 300;

export interface WatchOptions {
  /** How often to sync when nothing else asked for one: default 1 s, or 30 s when the server pokes. */
  readonly pollMs?: number;
  /** Ends the watch, cancelling the sync in progress (what it did is kept; the next sync carries on). */
  readonly signal?: AbortSignal;
  /** The first sync's report, always (later syncs report only when they moved entries). */
  readonly onStarted?: (report: SyncReport) => void;
  /** A later sync that moved entries (`sent` and `received` name them). */
  readonly onReport?: (report: SyncReport) => void;
  /**
   * A sync that failed; the watch goes on (what was stamped is sent by the
   * next one). A server that cannot be reached is reported once, at the
   * first failure, not at every retry, until a sync reaches it again
   * (`onReachable`); the first sync waits for it likewise.
   */
  readonly onError?: (e: unknown) => void;
  /** Every sync of the watch may push a deletion of most of the tree (SyncOptions.allowMassDelete). */
  readonly allowMassDelete?: boolean;
  /** A sync reached the server again after `onError` reported it unreachable. */
  readonly onReachable?: () => void;
  /**
   * False: only pull (`ferry pull --watch`, a read-only token). Local changes
   * are stamped but never sent; each such path is reported once (`onUnpushed`).
   */
  readonly pushes?: boolean;
  /** Local changes a pull-only watch keeps local, each path once. */
  readonly onUnpushed?: (paths: readonly string[]) => void;
  /**
   * How long a file that was being written must be left alone before it is
   * sent (default 2000 ms; 0 sends every burst as soon as the tree is quiet).
   * A finished save is sent after 20 ms of quiet (settle.ts).
   */
  readonly settleMs?: number;
  /** A file written for longer than this is sent anyway, as it is (default 60000 ms). */
  readonly maxSettleMs?: number;
}

/** Default polls: without pokes the poll is how server changes arrive; with them, a safety net. */
const POLL_MS = 1000;
const POLL_WITH_POKES_MS = 30_000;

/** Runs an operation on the watched engine alone: after the sync in progress, before the next. */
export interface Turns {
  turn<T>(operation: () => Promise<T>): Promise<T>;
}

/**
 * `onTurns` is handed the watch's turns as soon as the loop exists (before
 * its first sync, which any turn asked for meanwhile follows): for
 * workspace.ts, which routes its own operations through them while the
 * watch runs.
 */
export async function watch(
  engine: SyncEngine,
  options: WatchOptions,
  onTurns: (turns: Turns) => void = () => {},
): Promise<void> {
  const syncs = new SyncQueue(engine, options);
  onTurns(syncs);
  const server = engine.transport.listen({ poked: (rev) => syncs.poked(rev), reconnected: () => syncs.request() });
  const pollMs = options.pollMs ?? (server.pushes ? POLL_WITH_POKES_MS : POLL_MS);

  // Loaded here, not at startup: only --watch needs it.
  const { default: chokidar } = await import("chokidar");
  const ignored = (rel: string, isDir = false) =>
    rel !== "" && !rel.startsWith("..") && engine.ignore.ignoresPathOrAncestor(rel, isDir);
  // What chokidar was told to leave alone (and whether a directory): watched once the rules let it go.
  const unwatched = new Map<string, boolean>();
  const watcher = chokidar.watch(engine.root, {
    ignoreInitial: true,
    followSymlinks: false,
    // Asked once without stats, then with them: a dir-only rule (`build/`) answers the second time.
    ignored: (abs: string, stats?: { isDirectory(): boolean }) => {
      const isDir = stats?.isDirectory() ?? false;
      const skip = ignored(relative(engine.root, abs).split(sep).join("/"), isDir);
      if (skip) unwatched.set(abs, isDir);
      return skip;
    },
  });
  // The rules changed (a `.ferryignore` edited here, or pulled): watch what they let go, and sync,
  // whose push scans the tree again first (sync.ts) so that what they now ignore is not sent.
  const stopHearingRules = engine.ignore.onChange(() => {
    for (const [abs, isDir] of unwatched) {
      if (ignored(relative(engine.root, abs).split(sep).join("/"), isDir)) continue;
      unwatched.delete(abs);
      watcher.add(abs);
    }
    syncs.request();
  });
  const settler = new Settler(engine.root, (paths) => syncs.touched(paths), {
    ...(options.settleMs !== undefined ? { windowMs: options.settleMs } : {}),
    ...(options.maxSettleMs !== undefined ? { maxMs: options.maxSettleMs } : {}),
  });
  syncs.unsettled = (rel) => settler.holding(rel);
  const changed = (abs: string) => {
    const rel = relative(engine.root, abs).split(sep).join("/");
    // A `.ferryignore` is read at once: the events after it are judged by what it says now.
    const rulesAt = ruleFileDir(rel);
    if (rulesAt !== null) reloadRules(engine, rulesAt, options);
    if (rel === "" || rel.startsWith("..") || ignored(rel)) return;
    settler.changed(rel);
  };
  watcher.on("all", (event, abs: string) => {
    if (event === "unlink" || event === "unlinkDir") syncs.deleted();
    changed(abs);
    if (event === "addDir") setTimeout(() => changed(abs), NEW_DIR_RECHECK_MS).unref();
    syncs.quietScan();
  });
  // chokidar says nothing of a file deleted before it could stat it (one this
  // host just pulled, removed at once); the raw event still names it.
  watcher.on("raw", (_event, name: string, details: unknown) => {
    const dir = (details as { watchedPath?: unknown } | undefined)?.watchedPath;
    if (name === "" || typeof dir !== "string") return;
    // A file's own watch names the file itself; a directory's names a child.
    changed(basename(dir) === name ? dir : join(dir, name));
    syncs.quietScan();
  });
  let poll: NodeJS.Timeout | undefined;
  let rescan: NodeJS.Timeout | undefined;

  try {
    // The watcher is ready before the first sync scans: a change made while
    // that sync runs is seen by one or the other (the events are folded
    // into the next sync), never by neither.
    await new Promise<void>((resolve, reject) => {
      watcher.once("ready", resolve);
      watcher.once("error", reject);
    });
    // Not `onStarted?.(await syncs.first())`: without onStarted that skips the call's argument, the first sync.
    const started = await syncs.first();
    if (started === null) return; // stopped while waiting for the server
    options.onStarted?.(started);
    poll = setInterval(() => syncs.request(), pollMs);
    rescan = setInterval(() => syncs.request(true), RESCAN_MS);
    await Promise.race([aborted(options.signal), syncs.refused]);
  } finally {
    syncs.stop();
    stopHearingRules();
    if (poll) clearInterval(poll);
    if (rescan) clearInterval(rescan);
    settler.stop();
    server.stop();
    await watcher.close();
    await syncs.idle();
  }
}

/** Reads a `.ferryignore` again; one that cannot be read is reported (and the scans stop at its directory). */
function reloadRules(engine: SyncEngine, dir: string, options: WatchOptions): void {
  try {
    engine.ignore.reload(dir);
  } catch (e) {
    options.onError?.(e);
  }
}

/** Resolves when `signal` aborts; never without one. */
function aborted(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) resolve();
    else signal?.addEventListener("abort", () => resolve(), { once: true });
  });
}
