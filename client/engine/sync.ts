/**
 * The sync engine: hello, scan (uploading new chunks as it hashes them), catch
 * up with the server, push. Which way it catches up follows from hello:
 *
 * - nothing new on either side: done after hello (one round trip);
 * - the saved pull cursor is behind: pull from it (`incremental`);
 * - the host's position is unknown or stale (a new store over a tree on
 *   disk, or a store older than the server's `acked`): pull every entry
 *   from the origin, adopt what already matches, merge the rest (`reconcile`);
 * - the server was restored (`resync`): the same, but the host's differing
 *   state wins and is pushed back.
 *
 * Only what differs is ever sent; a `conflict` on push pulls (keeping the
 * local version as a conflict copy) and pushes again.
 */

import { ORIGIN } from "../../protocol/cursor.ts";
import { isOtherHistory } from "../../protocol/error-details.ts";
import type { HelloResponse } from "../../protocol/hello.ts";
import { nowMs } from "../common/clock.ts";
import { trace } from "../common/trace.ts";
import { IgnoreRules } from "../scan/ignore-rules.ts";
import { Scanner } from "../scan/scanner.ts";
import type { HostStore, StorePosition } from "../store/store.ts";
import type { Transport } from "../transport/transport.ts";
import { catchUpMode, pastHorizonOnly, pullWhatRulesLetGo, reconcile, reconciles, resumeFrom } from "./catch-up.ts";
import { type ApplyHooks, EngineContext } from "./context.ts";
import { healObjects } from "./heal.ts";
import { type HelloAsk, sayHello } from "./hello.ts";
import { DeletionGuard, type MassDeleteRule } from "./mass-delete.ts";
import { pullChanges } from "./pull.ts";
import { recoverInterruptedPull } from "./pull-journal.ts";
import { pushResolvingConflicts } from "./push-conflicts.ts";
import { ledgerOf } from "./renames.ts";
import { emptyReport, type ProgressSink, SILENT, type SyncReport } from "./report.ts";
import { scanAndStamp } from "./scan-stamp.ts";
import { stampScan } from "./stamp.ts";
import { behind, lookStatus, type StatusReport } from "./status.ts";

export interface EngineOptions {
  /** The directory kept in sync (absolute). */
  readonly root: string;
  readonly store: HostStore;
  readonly transport: Transport;
  /** Defaults to `<root>/.ferryignore` plus `ignorePatterns`. */
  readonly ignore?: IgnoreRules;
  readonly ignorePatterns?: readonly string[];
  readonly progress?: ProgressSink;
  /** Smaller push packs than the server allows (more, shorter requests); the server's limit otherwise. */
  readonly maxPackEntries?: number;
  /** Most chunk bytes held for uploading while scanning (early-upload.ts; default four request bodies). */
  readonly maxEarlyUploadBytes?: number;
  /** The moments of a pull where tests make a local save race it (context.ts ApplyHooks). */
  readonly applyHooks?: ApplyHooks;
  /**
   * Sees every hello answer before the sync acts on it; throwing stops the
   * sync with nothing changed. The CLI refuses here to pull a workspace that
   * was never pushed to (a typo) and records the directory's binding.
   */
  readonly onHello?: (hello: HelloResponse) => void;
  /**
   * The readable name this host asks for at hello (protocol/label.ts): shown
   * in the server's stats and naming its conflict copies. Without one, the
   * copies carry 8 hex digits of the host id.
   */
  readonly label?: string;
  /**
   * Whether this directory has yet to meet the workspace: its first sync
   * with it, which keeps both sides of every path that differs (decide.ts
   * `meet`). workspace.ts answers from the directory's binding. Without it
   * a host with no pull position reconciles as a lost store (PROTOCOL.md §9.3).
   */
  readonly meeting?: FirstMeeting;
  /**
   * Throws when the root is no longer the folder the host opened (deleted,
   * replaced, unmounted: store/root-identity.ts): called before a scan and
   * before every pack pushed, so such a root stops the sync with nothing sent.
   */
  readonly checkRoot?: () => void;
  /** Holds back a push that deletes most of the tree (mass-delete.ts); none when absent. */
  readonly massDelete?: MassDeleteRule | null;
}

/** A directory's first meeting with its workspace (workspace.ts keeps it in `.ferry/root.db`). */
export interface FirstMeeting {
  /** True until a catch-up with the workspace has completed. */
  pending(): boolean;
  /** Called once a catch-up has completed: later reconciles are a lost store's. */
  met(): void;
}

export interface SyncOptions {
  /** Scan the tree for local changes first (default true). Without it only changes already stamped are pushed. */
  readonly scan?: boolean;
  /** Apply the server's changes (default true). A reconcile or a conflict pulls even when false. */
  readonly pull?: boolean;
  /** Send local changes (default true). */
  readonly push?: boolean;
  /** Push even a mass deletion (EngineOptions.massDelete). */
  readonly allowMassDelete?: boolean;
  /** After the push, upload every agreed file's chunks the server answers missing (heal.ts). */
  readonly heal?: boolean;
  /** Paths the scan leaves unstamped this time: files a watch sees still being written (settle.ts). */
  readonly unsettled?: (path: string) => boolean;
  /** Cancels the sync: the scan stops at its next path (its transport's calls fail at once: workspace.ts). */
  readonly signal?: AbortSignal | undefined;
}

export class SyncEngine {
  readonly root: string;
  readonly store: HostStore;
  readonly transport: Transport;
  readonly ignore: IgnoreRules;
  private readonly progress: ProgressSink;
  private readonly maxPackEntries: number;
  private readonly maxEarlyUploadBytes: number | undefined;
  private readonly applyHooks: ApplyHooks;
  private readonly onHello: ((hello: HelloResponse) => void) | null;
  private readonly label: string | undefined;
  private readonly meeting: FirstMeeting | null;
  private readonly checkRoot: () => void;
  private readonly deletions: DeletionGuard | null;
  /** The ignore rules' generation the last full scan walked with: pending changes were judged by it. */
  private scannedRules: number;

  constructor(options: EngineOptions) {
    this.root = options.root;
    this.store = options.store;
    this.transport = options.transport;
    this.ignore = options.ignore ?? IgnoreRules.load(options.root, options.ignorePatterns ?? []);
    this.progress = options.progress ?? SILENT;
    this.maxPackEntries = options.maxPackEntries ?? Number.MAX_SAFE_INTEGER;
    this.maxEarlyUploadBytes = options.maxEarlyUploadBytes;
    this.applyHooks = options.applyHooks ?? {};
    this.onHello = options.onHello ?? null;
    this.label = options.label;
    this.meeting = options.meeting ?? null;
    this.checkRoot = options.checkRoot ?? (() => {});
    this.deletions = options.massDelete ? new DeletionGuard(options.massDelete) : null;
    this.scannedRules = this.ignore.generation;
  }

  /** One sync: scan, hello, catch up, push. */
  async sync(options: SyncOptions = {}): Promise<SyncReport> {
    const started = nowMs();
    trace(() => "sync: begins");
    this.checkRoot();
    const ctx = this.context();
    recoverInterruptedPull(this.root, this.store, ctx.scanner);
    // Before the scan stamps anything: the host rev counter as the store had it.
    const position = this.store.position();
    // Hello is sent first and answered while the scan runs (scan-stamp.ts):
    // what hello records, or refuses, still comes before anything is stamped,
    // and its answer says whether new chunks go up while they are hashed.
    const helloing = sayHello(ctx, this.helloAsk());
    if (options.scan ?? true) this.scannedRules = this.ignore.generation;
    const hello =
      (options.scan ?? true)
        ? await scanAndStamp(ctx, helloing, {
            progress: this.progress,
            uploadEarly: (answer) => (options.push ?? true) && !reconciles(answer, position),
            maxEarlyUploadBytes: this.maxEarlyUploadBytes,
            unsettled: options.unsettled,
            signal: options.signal,
          })
        : await helloing;
    try {
      await this.catchUpAndPush(ctx, hello, position, options);
    } catch (e) {
      if (!isOtherHistory(e)) throw e;
      // The server's history is no longer the one this host's position is in
      // (restored from an older copy since hello; PROTOCOL.md §4.6): hello
      // again, which answers `resync`, and reconcile.
      await this.catchUpAndPush(ctx, await sayHello(ctx, this.helloAsk()), this.store.position(), options);
    } finally {
      // No upload outlives the sync, whatever ended it.
      await ctx.uploadsLanding;
    }
    ctx.report.ms = nowMs() - started;
    ctx.report.renamed = ledgerOf(ctx.report).renames();
    trace(() => `sync: done, ${ctx.report.roundTrips} round trips`);
    return ctx.report;
  }

  private async catchUpAndPush(
    ctx: EngineContext,
    hello: HelloResponse,
    position: StorePosition,
    options: SyncOptions,
  ): Promise<void> {
    ctx.report.mode = catchUpMode(ctx, hello, position);
    trace(
      () =>
        `sync ${ctx.report.mode}: server rev ${hello.rev}, pulled ${position.pull?.cursor.rev ?? "never"}, acked ${hello.acked.rev}`,
    );
    const pull = position.pull;
    // Only a first push into an empty workspace, which pulls nothing, cuts its
    // pack while the early upload's last batches are answered (scan-stamp.ts);
    // a pull runs with no upload beside it.
    if (!(ctx.report.mode === "incremental" && pull === null && hello.rev === 0)) await ctx.uploadsLanding;
    const meets = this.meeting?.pending() === true;
    if (ctx.report.mode !== "incremental")
      await reconcile(ctx, ctx.report.mode, { horizon: pastHorizonOnly(hello), meets });
    else if (pull === null && hello.rev === 0) {
      // An empty server: the host now knows all it has (at rev 0). Whatever the server
      // holds later, this host never had, so its own versions are merged as concurrent
      // work, not reconciled as a lost store's (whose later saves win).
      this.store.setPull({ epoch: ctx.server.epoch, cursor: ORIGIN });
    } else if (
      (options.pull ?? true) &&
      (behind(pull?.cursor ?? ORIGIN, hello.rev) || this.store.deferred().length > 0)
    ) {
      // Changes an earlier pull could not write are retried even with nothing new to pull.
      await pullChanges(ctx, { ...resumeFrom(pull), mode: "merge", skipOwn: true });
    }
    await pullWhatRulesLetGo(ctx, options);
    // Caught up: the directory has met the workspace (a pull this sync skipped changes nothing to that).
    if (meets && this.store.position().pull !== null) this.meeting?.met();
    if (options.push ?? true) {
      this.rescanIfRulesMoved(ctx);
      await pushResolvingConflicts(ctx, this.deletions, options.allowMassDelete === true);
      if (options.heal === true) ctx.report.healed = await healObjects(ctx);
    }
  }

  /**
   * The ignore rules changed since the last full scan (a `.ferryignore` a
   * watch saw written, or this sync's pull wrote): the tree is scanned again
   * before anything is pushed. A path they now ignore is forgotten here,
   * pending change or deletion included, and never deleted on the server
   * (Scanner's `dropped`); one they no longer ignore is stamped and pushed.
   */
  private rescanIfRulesMoved(ctx: EngineContext): void {
    if (this.ignore.generation === this.scannedRules) return;
    this.scannedRules = this.ignore.generation;
    trace(() => "sync: the ignore rules changed, scanning again before the push");
    stampScan(this.store, ctx.scanner.scan());
  }

  /** What a sync would send and receive, without changing the tree or the store. */
  status(): Promise<StatusReport> {
    return lookStatus(this.context(), this.helloAsk(), { meets: this.meeting?.pending() === true });
  }

  /**
   * Rescans only these paths (and what is under them) and stamps what
   * changed: for watchers, which know what moved. Then `sync({scan: false})`.
   * `unsettled` paths (files still being written) are left for later.
   */
  stampPaths(paths: readonly string[], unsettled?: (path: string) => boolean): number {
    this.checkRoot();
    const scanner = new Scanner(this.root, this.store, this.ignore);
    recoverInterruptedPull(this.root, this.store, scanner);
    const sorted = [...new Set(paths)].sort();
    let stamped = 0;
    let last: string | null = null;
    for (const path of sorted) {
      if (last !== null && path.startsWith(`${last}/`)) continue; // covered by its ancestor's scan
      last = path;
      stamped += stampScan(this.store, scanner.scan(path), unsettled);
    }
    return stamped;
  }

  private helloAsk(): HelloAsk {
    return { onHello: this.onHello, ...(this.label !== undefined ? { label: this.label } : {}) };
  }

  private context(): EngineContext {
    const scanner = new Scanner(this.root, this.store, this.ignore, true);
    const ctx = new EngineContext(
      this.root,
      this.store,
      this.transport,
      this.ignore,
      scanner,
      emptyReport(),
      this.progress,
    );
    ctx.packEntriesCap = this.maxPackEntries;
    ctx.applyHooks = this.applyHooks;
    ctx.checkRoot = this.checkRoot;
    return ctx;
  }
}
