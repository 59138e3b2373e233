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

import { type Cursor, ORIGIN } from "../../protocol/cursor.ts";
import { conflictsOf, isOtherHistory } from "../../protocol/error-details.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import type { HelloResponse, PullPosition } from "../../protocol/hello.ts";
import { PROTOCOL_VERSION } from "../../protocol/version.ts";
import { IgnoreRules } from "../scan/ignore-rules.ts";
import { Scanner, type ScanResult } from "../scan/scanner.ts";
import type { HostStore, PathRecord, StorePosition } from "../store/store.ts";
import { trace } from "../trace.ts";
import type { Transport } from "../transport/transport.ts";
import { EngineContext } from "./context.ts";
import { EarlyUpload } from "./early-upload.ts";
import { applyDroppedDeletions, deletedPastHorizon } from "./horizon.ts";
import { pullChanges } from "./pull.ts";
import { recoverInterruptedPull } from "./pull-journal.ts";
import { pushPending } from "./push.ts";
import { emptyReport, type ProgressSink, SILENT, type SyncMode, type SyncReport } from "./report.ts";
import { stampScan } from "./stamp.ts";

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
  /**
   * Called with a path after its new bytes are downloaded, right before the
   * pull re-checks it and renames over it (or unlinks it): the moment a
   * local save races the pull. Tests make that race happen here.
   */
  readonly beforeReplace?: (path: string) => void | Promise<void>;
  /**
   * Called with a path after that re-check passed, right before the rename
   * or unlink itself: a write landing here was made after the check, and is
   * found under the second name the applier holds the file by (replace-guard.ts).
   * Tests make that race happen here.
   */
  readonly atReplace?: (path: string) => void;
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
}

export interface SyncOptions {
  /** Scan the tree for local changes first (default true). Without it only changes already stamped are pushed. */
  readonly scan?: boolean;
  /** Apply the server's changes (default true). A reconcile or a conflict pulls even when false. */
  readonly pull?: boolean;
  /** Send local changes (default true). */
  readonly push?: boolean;
}

export interface StatusReport {
  /** Local changes not yet on the server. */
  readonly toPush: { readonly path: string; readonly kind: string }[];
  /** Server changes not yet here. */
  readonly toPull: { readonly path: string; readonly kind: string; readonly rev: number }[];
  readonly serverRev: number;
  readonly resync: boolean;
  readonly roundTrips: number;
}

/**
 * Whether this sync will pull the server's whole state before pushing (a
 * reconcile, whatever `catchUpMode` then decides from the pending count):
 * the host's chunks are then mostly on the server already, and uploading
 * them while scanning would only probe for them batch by batch.
 */
function reconciles(hello: HelloResponse, position: StorePosition): boolean {
  const neverPulled = position.pull === null;
  return hello.resync || hello.acked.rev > position.hostRev || (neverPulled && hello.rev > 0);
}

/** While hello is out, the scan gives the event loop a turn at least this often, so the answer is read when it lands. */
const HELLO_TURN_MS = 4;

/** Files this large get a progress line of their own while they are hashed (the scan is synchronous within a file). */
const LARGE_FILE_BYTES = 32 * 1024 * 1024;

/** Conflicts on push resolved by pulling before the engine gives up. */
const MAX_CONFLICT_ROUNDS = 3;

export class SyncEngine {
  readonly root: string;
  readonly store: HostStore;
  readonly transport: Transport;
  readonly ignore: IgnoreRules;
  private readonly progress: ProgressSink;
  private readonly maxPackEntries: number;
  private readonly maxEarlyUploadBytes: number | undefined;
  private readonly beforeReplace: ((path: string) => void | Promise<void>) | null;
  private readonly atReplace: ((path: string) => void) | null;
  private readonly onHello: ((hello: HelloResponse) => void) | null;
  private readonly label: string | undefined;

  constructor(options: EngineOptions) {
    this.root = options.root;
    this.store = options.store;
    this.transport = options.transport;
    this.ignore = options.ignore ?? IgnoreRules.load(options.root, options.ignorePatterns ?? []);
    this.progress = options.progress ?? SILENT;
    this.maxPackEntries = options.maxPackEntries ?? Number.MAX_SAFE_INTEGER;
    this.maxEarlyUploadBytes = options.maxEarlyUploadBytes;
    this.beforeReplace = options.beforeReplace ?? null;
    this.atReplace = options.atReplace ?? null;
    this.onHello = options.onHello ?? null;
    this.label = options.label;
  }

  /** One sync: scan, hello, catch up, push. */
  async sync(options: SyncOptions = {}): Promise<SyncReport> {
    const started = performance.now();
    const ctx = this.context();
    recoverInterruptedPull(this.root, this.store, ctx.scanner);
    // Before the scan stamps anything: the host rev counter as the store had it.
    const position = this.store.position();
    // Hello is sent first and answered while the scan runs (the scan only
    // reads the store, so what hello records, or refuses, still comes before
    // anything is stamped); the scan uploads new chunks as it hashes them
    // once hello has said where this host stands (early-upload.ts).
    const helloing = this.hello(ctx);
    const hello =
      (options.scan ?? true)
        ? await this.scanWhileHello(ctx, helloing, (h) => (options.push ?? true) && !reconciles(h, position))
        : await helloing;
    try {
      await this.catchUpAndPush(ctx, hello, position, options);
    } catch (e) {
      if (!isOtherHistory(e)) throw e;
      // The server's history is no longer the one this host's position is in
      // (restored from an older copy since hello; PROTOCOL.md §4.6): hello
      // again, which answers `resync`, and reconcile.
      await this.catchUpAndPush(ctx, await this.hello(ctx), this.store.position(), options);
    }
    ctx.report.ms = performance.now() - started;
    return ctx.report;
  }

  private async catchUpAndPush(
    ctx: EngineContext,
    hello: HelloResponse,
    position: StorePosition,
    options: SyncOptions,
  ): Promise<void> {
    ctx.report.mode = this.catchUpMode(ctx, hello, position);
    trace(
      () =>
        `sync ${ctx.report.mode}: server rev ${hello.rev}, pulled ${position.pull?.cursor.rev ?? "never"}, acked ${hello.acked.rev}`,
    );
    const pull = position.pull;
    if (ctx.report.mode !== "incremental")
      await this.reconcile(ctx, ctx.report.mode, { horizon: pastHorizonOnly(hello) });
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
    if (options.push ?? true) await this.pushResolvingConflicts(ctx);
  }

  /**
   * Rescans only these paths (and what is under them) and stamps what
   * changed: for watchers, which know what moved. Then `sync({scan: false})`.
   */
  stampPaths(paths: readonly string[]): number {
    const scanner = new Scanner(this.root, this.store, this.ignore);
    recoverInterruptedPull(this.root, this.store, scanner);
    const sorted = [...new Set(paths)].sort();
    let stamped = 0;
    let last: string | null = null;
    for (const path of sorted) {
      if (last !== null && path.startsWith(`${last}/`)) continue; // covered by its ancestor's scan
      last = path;
      stamped += stampScan(this.store, scanner.scan(path));
    }
    return stamped;
  }

  /** What a sync would send and receive, without changing the tree or the store. */
  async status(): Promise<StatusReport> {
    const ctx = this.context();
    // Hello is answered while the tree is scanned, as in sync().
    const helloing = this.hello(ctx, false);
    const scan = await new Scanner(this.root, this.store, this.ignore).scanPausing(whileAnswering(helloing).turn, {});
    const hello = await helloing;
    const toPush = new Map<string, string>();
    for (const r of this.store.pending(hello.acked.rev, Number.MAX_SAFE_INTEGER))
      toPush.set(r.entry.path, r.entry.kind);
    for (const c of scan.changes) toPush.set(c.entry.path, c.entry.kind);
    const toPull: StatusReport["toPull"] = [];
    let after = hello.resync ? ORIGIN : (this.store.position().pull?.cursor ?? ORIGIN);
    while (behind(after, hello.rev)) {
      const page = await ctx.call("changes", { after, hostId: this.store.hostId, limit: hello.limits.maxPageEntries });
      for (const c of page.entries) toPull.push({ path: c.path, kind: c.kind, rev: c.rev });
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
    ctx.beforeReplace = this.beforeReplace;
    ctx.atReplace = this.atReplace;
    return ctx;
  }

  /**
   * The scan, run while hello is out: a rescan that reads nothing (most
   * paths unchanged) overlaps hello's round trip. The walk gives the event
   * loop a turn every few milliseconds until hello has answered, so the
   * answer is read when it lands, and ends early if hello failed; the first
   * file it must read waits for hello, whose answer decides whether new
   * chunks go to the early upload (`uploadEarly`). Returns hello's answer;
   * the scan is stamped only after it.
   */
  private async scanWhileHello(
    ctx: EngineContext,
    helloing: Promise<HelloResponse>,
    uploadEarly: (hello: HelloResponse) => boolean,
  ): Promise<HelloResponse> {
    const waiting = whileAnswering(helloing);
    // Made (or not) once hello has answered.
    const early: { decided: boolean; upload?: EarlyUpload } = { decided: false };
    const decide = (hello: HelloResponse) => {
      early.decided = true;
      if (uploadEarly(hello)) early.upload = new EarlyUpload(ctx, this.maxEarlyUploadBytes);
    };
    const pause = (beforeRead: boolean): Promise<void> | null => {
      if (early.decided) return early.upload?.pause() ?? null;
      const hello = waiting.answer();
      if (hello !== null) {
        decide(hello);
        return null;
      }
      // The first file read waits for hello, so that its chunks may go early too.
      return beforeRead ? helloing.then(decide) : waiting.turn();
    };
    let last = 0;
    let result: ScanResult;
    try {
      result = await ctx.scanner.scanPausing(pause, {
        onProgress: (seen: number) => {
          this.progress.advance("scan", seen - last);
          last = seen;
        },
        // The paths the store knew are the likely total (exact for an unchanged tree).
        onKnown: (paths: number) => this.progress.begin("scan", paths),
        onFileBytes: this.largeFileProgress(),
        onChunk: (hash, bytes) => early.upload?.add(hash, bytes),
      });
    } finally {
      if (early.upload) {
        await early.upload.finish();
        // The bytes sent while scanning had no total; the push's own upload has one.
        this.progress.end("upload");
      }
    }
    const hello = await helloing;
    this.progress.end("scan");
    ctx.report.stamped = stampScan(this.store, result);
    ctx.report.skipped.push(...result.skipped);
    return hello;
  }

  /** A `hash` task (bytes, with the file's size as total) for each file of LARGE_FILE_BYTES or more while it is read. */
  private largeFileProgress(): (path: string, done: number, size: number) => void {
    let current: string | null = null;
    let last = 0;
    return (path, done, size) => {
      if (size < LARGE_FILE_BYTES) return;
      if (path !== current) {
        this.progress.begin("hash", size);
        current = path;
        last = 0;
      }
      this.progress.advance("hash", done - last);
      last = done;
      if (done >= size) {
        this.progress.end("hash");
        current = null;
      }
    };
  }

  /** `record` false: a look (status), which changes nothing here nor, by saying `look`, on the server. */
  private async hello(ctx: EngineContext, record = true): Promise<HelloResponse> {
    const position = this.store.position();
    const hello = await ctx.call("hello", {
      version: PROTOCOL_VERSION,
      hostId: this.store.hostId,
      hostRev: position.hostRev,
      ...(position.pull ? { pull: position.pull } : {}),
      capabilities: ["inline-objects"],
      ...(this.label !== undefined ? { label: this.label } : {}),
      ...(record ? {} : { look: true }),
    });
    if (hello.version !== PROTOCOL_VERSION) {
      throw new ProtocolError(
        "unsupported_version",
        `the server speaks version ${hello.version}, ferry ${PROTOCOL_VERSION}`,
      );
    }
    this.onHello?.(hello);
    ctx.hello = hello;
    ctx.acked = hello.acked;
    ctx.report.resumedFrom = { rev: hello.acked.rev, path: hello.acked.path };
    ctx.report.serverRev = hello.rev;
    if (record && (position.acked.rev !== hello.acked.rev || position.acked.path !== hello.acked.path)) {
      this.store.setAcked(hello.acked);
    }
    // The server forgot deletions up to its tombstone horizon; so does the host (once per rise).
    if (record && hello.tombstonesDropped) this.store.pruneTombstones(hello.tombstonesDropped);
    return hello;
  }

  /**
   * Decides how to catch up. A store older than the server's `acked` (it was
   * restored from a copy) first re-stamps its unacknowledged changes above
   * `acked`: the revs in between were used by the lost copy.
   */
  private catchUpMode(ctx: EngineContext, hello: HelloResponse, position: StorePosition): SyncMode {
    let mode: SyncMode = "incremental";
    if (hello.acked.rev > position.hostRev) {
      this.restampAbove(position.acked.rev, hello.acked.rev);
      mode = "reconcile";
    }
    // Past the tombstone horizon alone, the server's history is this host's: a merge, not a restore's local-wins.
    if (hello.resync) return pastHorizonOnly(hello) ? "reconcile" : "resync";
    const neverPulled = position.pull === null;
    if (neverPulled && hello.rev > 0 && this.store.pendingCount(ctx.acked.rev) > 0) return "reconcile";
    return mode;
  }

  private restampAbove(storeAckedRev: number, ackedRev: number): void {
    const store = this.store;
    store.transaction(() => {
      store.raiseHostRev(ackedRev);
      // Every change this store had not seen acknowledged, whatever rev it had.
      const pending = store.pending(storeAckedRev, Number.MAX_SAFE_INTEGER);
      let rev = pending.length > 0 ? store.reserveHostRevs(pending.length) : 0;
      for (const r of pending) store.put({ ...r, hostRev: rev++ });
    });
  }

  /**
   * Pulls the server's whole state (entries; bytes only where they differ),
   * then stamps for push every synced local path the server has no entry for;
   * past the tombstone horizon (`horizon`), one this host agreed with the
   * server and did not change since was deleted there, and is deleted here.
   */
  private async reconcile(
    ctx: EngineContext,
    mode: SyncMode,
    { horizon = false, history = true }: { readonly horizon?: boolean; readonly history?: boolean } = {},
  ): Promise<void> {
    const onServer = new Set<string>();
    await pullChanges(ctx, {
      from: ORIGIN,
      mode: mode === "resync" ? "local-wins" : "merge",
      skipOwn: false,
      history,
      onPath: (p) => onServer.add(p),
    });
    const store = this.store;
    const absent = (r: PathRecord) =>
      !onServer.has(r.entry.path) && r.entry.kind !== "gone" && !ctx.isPending(r.hostRev);
    if (horizon) {
      const dropped = ctx.server.tombstonesDropped ?? 0;
      const deleted = [...store.all()].filter((r) => absent(r) && deletedPastHorizon(r, dropped));
      await applyDroppedDeletions(
        ctx,
        deleted.map((r) => r.entry.path),
        dropped,
      );
    }
    store.transaction(() => {
      // What is left (deleted ones are tombstones now; a save since the scan is pending): pushed back.
      const missing = [...store.all()].filter(absent);
      let rev = missing.length > 0 ? store.reserveHostRevs(missing.length) : 0;
      for (const r of missing) store.put({ ...r, hostRev: rev++ });
    });
  }

  private async pushResolvingConflicts(ctx: EngineContext): Promise<void> {
    for (let round = 1; ; round++) {
      try {
        await pushPending(ctx);
        return;
      } catch (e) {
        if (!(e instanceof ProtocolError) || e.code !== "conflict") throw e;
        trace(() => `conflict: ${(conflictsOf(e) ?? []).map((c) => `${c.path} rev ${c.rev}`).join(", ")}`);
        if (round > MAX_CONFLICT_ROUNDS) throw namingConflicts(e);
      }
      // The server moved under this host: take its changes (keeping local
      // versions as conflict copies), then push again. The last round compares
      // the whole state, in case the saved cursor is past what conflicts, and
      // without history: this store is intact, so a new local file meets the
      // merge rules (a conflict copy), not a lost store's "the later save
      // wins" (PROTOCOL.md §9.3 rule 5), which replaced another host's version
      // with no copy (soak seeds 33, 36, 80).
      if (round < MAX_CONFLICT_ROUNDS) {
        await pullChanges(ctx, { ...resumeFrom(this.store.position().pull), mode: "merge", skipOwn: true });
      } else {
        await this.reconcile(ctx, "reconcile", { history: false });
      }
    }
  }
}

/**
 * The conflict a host could not resolve by pulling, rethrown naming its
 * paths (the server's message only counts them), so a user can look at them.
 */
function namingConflicts(e: ProtocolError): ProtocolError {
  const paths = (conflictsOf(e) ?? []).map((c) => c.path);
  if (paths.length === 0) return e;
  const shown = paths.slice(0, 10).join(", ") + (paths.length > 10 ? `, and ${paths.length - 10} more` : "");
  return new ProtocolError(
    "conflict",
    `still in conflict after pulling ${MAX_CONFLICT_ROUNDS} times: ${shown}`,
    e.details,
  );
}

/**
 * A request that is out while the scan runs. `turn`, for Scanner.scanPausing,
 * gives the event loop a turn every HELLO_TURN_MS until the answer is in (so
 * it is read when it lands, not after the scan), and throws the request's
 * error once it failed, which ends the scan early; `answer` is the answer
 * once it is in.
 */
function whileAnswering<T>(pending: Promise<T>): { answer(): T | null; turn(): Promise<void> | null } {
  const state: { answer?: T; failure?: { readonly error: unknown } } = {};
  pending.then(
    (value) => {
      state.answer = value;
    },
    (error: unknown) => {
      state.failure = { error };
    },
  );
  let turned = performance.now();
  return {
    answer: () => state.answer ?? null,
    turn: () => {
      if (state.failure) throw state.failure.error;
      if (state.answer !== undefined || performance.now() - turned < HELLO_TURN_MS) return null;
      turned = performance.now();
      return new Promise((resolve) => setImmediate(resolve));
    },
  };
}

/** Where an incremental pull starts: the saved cursor and the identity of its rev, which the server checks. */
function resumeFrom(pull: PullPosition | null): { from: Cursor; fromRevId?: Uint8Array } {
  if (!pull) return { from: ORIGIN };
  return { from: pull.cursor, ...(pull.revId ? { fromRevId: pull.revId } : {}) };
}

/** Hello's `resync` has the tombstone horizon as its only reason (PROTOCOL.md §4.1). */
function pastHorizonOnly(hello: HelloResponse): boolean {
  return hello.resync && hello.horizon === true;
}

function behind(cursor: Cursor, serverRev: number): boolean {
  return cursor.path !== null || cursor.rev < serverRev;
}
