/**
 * One call to keep a directory in sync with a workspace, for hosts that
 * embed ferry (a container runtime) and for the CLI, which is built on it:
 *
 *   const ws = openWorkspace("/work", { url, workspace: "demo", token });
 *   const report = await ws.sync();   // report.sent / report.received name the paths
 *   await ws.close();
 *
 * It takes the directory's lock and checks its binding (store/binding.ts), opens
 * the store and a transport, and runs one operation at a time. An
 * operation's `signal` cancels it between round trips; what it had done
 * stays consistent (every step is resumable, as after a killed process).
 */
import { hostname } from "node:os";
import { ProtocolError } from "../../protocol/errors.ts";
import { toHex } from "../../protocol/hash.ts";
import type { HelloResponse } from "../../protocol/hello.ts";
import { isValidLabel, toLabel } from "../../protocol/label.ts";
import type { ServerClock } from "../common/server-clock.ts";
import { DEFAULT_MASS_DELETE, type MassDeleteRule } from "../engine/mass-delete.ts";
import type { ProgressSink, SyncReport } from "../engine/report.ts";
import type { StatusReport } from "../engine/status.ts";
import { SyncEngine, type SyncOptions } from "../engine/sync.ts";
import { type WatchOptions, watch } from "../engine/watch.ts";

export { NoSuchWorkspaceError } from "./first-use.ts";

import { type RestoreReport, type RestoreRequest, restoreAt } from "../history/restore-at.ts";
import { VCS_DIRS } from "../scan/ignore-rules.ts";
import { type Binding, type Remembered, RootBinding } from "../store/binding.ts";
import { rootToOpen } from "../store/find-root.ts";
import { holdRootIdentity } from "../store/root-identity.ts";
import { dropStore, openStore } from "../store/sqlite-store.ts";
import type { HostStore, StoreKind } from "../store/store.ts";
import { workspaceTransport } from "../transport/stack.ts";
import {
  agreedNothing,
  isFresh,
  NoSuchWorkspaceError,
  refuseUnknownWorkspace,
  removeUnboundStore,
} from "./first-use.ts";
import type { OperationOptions, PullOptions, PushOptions, StatusOptions } from "./operation-options.ts";
import { OperationQueue } from "./operation-queue.ts";

export interface WorkspaceOptions {
  /** Server base URL, e.g. `http://127.0.0.1:8787`. */
  readonly url: string;
  readonly workspace: string;
  /** A bearer token, or a function that returns a current one (asked before each request or socket). */
  readonly token: string | (() => string);
  /**
   * The clock a `token` function mints by (the CLI's, without a token given):
   * set to the server's from each hello's answer, and from a refusal of an
   * expired token, after which the call is made once more with a fresh token.
   * A host whose clock is off then still mints tokens the server accepts.
   */
  readonly serverClock?: ServerClock;
  /** `http` (default) or `ws`: one WebSocket, over which the server pokes a watch. */
  readonly transport?: "http" | "ws";
  /** `disk` (default): `<dir>/.ferry/store.db`, a restart resends nothing; `memory`: lost on close. */
  readonly store?: StoreKind;
  /** Gitignore-style patterns kept local, besides `<dir>/.ferryignore`. */
  readonly ignore?: readonly string[];
  /** Keep `.git`, `.hg` and `.svn` local. */
  readonly ignoreVcs?: boolean;
  /**
   * This host's readable name, unique in the workspace (the server adds `-2`,
   * `-3`... when another host has it): shown in stats and in the names of its
   * conflict copies. Default: the label the directory remembers from an
   * earlier sync (store/binding.ts), else the hostname, made safe
   * (protocol/label.ts). One given is remembered from its next sync on.
   */
  readonly label?: string;
  /** Sync with this workspace although the directory is bound to another. */
  readonly rebind?: boolean;
  /**
   * The workspace was deleted since this directory last synced it, and this
   * starts it again: push, pull and sync, refused `workspace_deleted`
   * without it, forget the directory's store and meet the new workspace as
   * a directory that never synced it (a first meeting: its tree is pushed;
   * whatever another host put there since is kept beside it). A watch
   * given it syncs so once before it starts; one running when the
   * workspace is deleted stops all the same.
   */
  readonly recreate?: boolean;
  /**
   * Take the directory's lock and keep its binding in `<dir>/.ferry/` (default
   * true). False only for a look at a directory never synced (status, a dry
   * run, with a memory store), which must leave nothing behind.
   */
  readonly lock?: boolean;
  readonly progress?: ProgressSink;
  /** Smaller push packs than the server allows. */
  readonly maxPackEntries?: number;
  /**
   * When a push counts as deleting most of the tree, and is held back with
   * MassDeleteError unless the operation allows it (`allowMassDelete`).
   * Default: more than half of a tree of 1,000 paths or more, or all of a
   * tree of 10 or more (engine/mass-delete.ts); `false`: never held back.
   */
  readonly massDelete?: MassDeleteRule | false;
}

export type { OperationOptions, PullOptions, PushOptions, StatusOptions } from "./operation-options.ts";

export interface Workspace {
  readonly root: string;
  /** Where the directory syncs to, and the label its host asks for. */
  readonly binding: Remembered;
  /** Sends local changes (creating the workspace). */
  push(options?: PushOptions): Promise<SyncReport>;
  /** Applies the workspace's changes to the directory. */
  pull(options?: PullOptions): Promise<SyncReport>;
  /** Pulls, then pushes. */
  sync(options?: PushOptions): Promise<SyncReport>;
  /**
   * Keeps the directory live until `signal` aborts: the loop `ferry sync
   * --watch` runs (`pushes: false`: `ferry pull --watch`, which, as a pull,
   * refuses a workspace nothing was pushed to unless `create`).
   */
  watch(options?: WatchOptions & { readonly create?: boolean }): Promise<void>;
  /** What a sync would send and receive; changes nothing. */
  status(options?: StatusOptions): Promise<StatusReport>;
  /**
   * Brings a path back as it was at a rev, as a new local change: pushes
   * first, keeps local work in the way as a conflict copy, then pushes
   * (history/restore-at.ts). In a watch, one of its turns.
   */
  restore(request: RestoreRequest, options?: OperationOptions): Promise<RestoreReport>;
  close(options?: CloseOptions): Promise<void>;
}

export interface CloseOptions {
  /**
   * The process ends right after (the CLI): close only the transport, which
   * would keep it alive, and leave the store and the directory's lock to the
   * process's exit, which releases them as a kill does. The store's
   * write-ahead log then stays for its next open to read, instead of being
   * copied into the database now with two fsyncs (15-25 ms of a replay
   * step, BENCHMARKS.md section 16); SQLite checkpoints it itself once it
   * passes 1,000 pages. What a kill at any point leaves is consistent (the
   * engine's invariant), and so is this. Never for a process that goes on:
   * the store stays open, and the directory locked, until it ends.
   */
  readonly atExit?: boolean;
}

/**
 * Opens the synced folder `dir` is in (`dir` itself, or the nearest one
 * above it: store/find-root.ts), or `dir` (an existing directory) as a new
 * one, for syncing with one workspace. Throws BoundElsewhereError,
 * StoreLockedError, and NestedRootError for a new root above an existing one.
 */
export function openWorkspace(dir: string, options: WorkspaceOptions): Workspace {
  const root = rootToOpen(dir);
  if (options.label !== undefined && !isValidLabel(options.label))
    throw new RangeError(`label '${options.label}': expected 1 to 63 of A-Z a-z 0-9 . _ -`);
  const asked: Binding = { url: options.url, workspace: options.workspace };
  const fresh = options.lock !== false && isFresh(root);
  const binding = options.lock === false ? RootBinding.none() : RootBinding.open(root);
  // The label the directory remembers, unless one is given: a command that names none never renames the host.
  const label = options.label ?? binding.bound?.label ?? toLabel(hostname());
  let store: HostStore;
  const kind = options.store ?? "disk";
  try {
    binding.check(root, asked, options.rebind === true);
    // A store kept for another workspace knows nothing of this one: rebound, the directory starts afresh.
    if (kind === "disk" && binding.bound !== null && !binding.matches(asked)) dropStore(root);
    store = openStore(kind, root);
  } catch (e) {
    binding.close();
    throw e;
  }
  const ops = new OperationQueue();
  let heard: HelloResponse | null = null;
  const onHello = (hello: HelloResponse) => {
    heard = hello;
    const bound = binding.matches(asked);
    if (bound && binding.bound?.label === label) return;
    if (!bound && ops.running.mustExist && hello.rev === 0) throw new NoSuchWorkspaceError(asked);
    if (ops.running.records) binding.record(asked, label);
  };
  const transport = workspaceTransport(options, () => ops.running.signal);
  // The folder's identity as opened, held across a recreate's new engine (which keeps `.ferry/`).
  const checkRoot = holdRootIdentity(root, options.lock !== false);
  const newEngine = () =>
    new SyncEngine({
      root,
      store,
      transport,
      ignorePatterns: [...(options.ignoreVcs ? VCS_DIRS : []), ...(options.ignore ?? [])],
      onHello,
      label,
      meeting: { pending: () => binding.meets(asked), met: () => binding.recordMet(asked) },
      checkRoot,
      massDelete: options.massDelete === false ? null : (options.massDelete ?? DEFAULT_MASS_DELETE),
      ...(options.progress ? { progress: options.progress } : {}),
      ...(options.maxPackEntries ? { maxPackEntries: options.maxPackEntries } : {}),
    });
  let engine = newEngine();
  // The workspace was deleted and `recreate` starts it again: the directory
  // forgets its store (positions in the deleted history, a host id it knew)
  // and that it met the workspace, as a rebind does, and syncs as a stranger.
  const syncRecreating = async (opts: SyncOptions): Promise<SyncReport> => {
    try {
      return await engine.sync(opts);
    } catch (e) {
      if (options.recreate !== true || !isWorkspaceDeleted(e)) throw e;
      store.close();
      if (kind === "disk") dropStore(root);
      store = openStore(kind, root);
      binding.forgetMet();
      engine = newEngine();
      return engine.sync(opts);
    }
  };
  const syncing = (signal: AbortSignal | undefined, mustExist = false) => ({ records: true, mustExist, signal });
  // Some operation of this run succeeded: a first run's `.ferry/` stays, whatever the store holds (close).
  let succeeded = false;
  const noteSuccess = <T>(value: T): T => {
    succeeded = true;
    return value;
  };
  const sync = (opts: SyncOptions, signal: AbortSignal | undefined, mustExist = false) =>
    ops.run(syncing(signal, mustExist), async () => {
      if (mustExist && binding.bound === null) await refuseUnknownWorkspace(transport, asked);
      return noteSuccess(await syncRecreating({ ...opts, signal }));
    });
  // The watch's own syncs run while it holds the queue; its signal also cancels the sync in
  // progress (its uploads in flight included): Ctrl-C stops at once.
  const watchLoop = (o: WatchOptions & { readonly create?: boolean }): Promise<void> =>
    ops.watch(syncing(o.signal, o.pushes === false && o.create !== true), async (handTurns) => {
      if (options.recreate === true)
        await syncRecreating({
          push: o.pushes !== false,
          signal: o.signal,
          allowMassDelete: o.allowMassDelete === true,
        });
      return watch(engine, { ...o, onStarted: (report) => o.onStarted?.(noteSuccess(report)) }, handTurns);
    });
  let closed = false;
  return {
    root: engine.root,
    get binding() {
      return { ...(binding.bound ?? asked), label };
    },
    push: (o = {}) =>
      sync({ pull: false, allowMassDelete: o.allowMassDelete === true, heal: o.heal === true }, o.signal),
    pull: (o = {}) => sync({ push: false }, o.signal, o.create !== true),
    sync: (o = {}) => sync({ allowMassDelete: o.allowMassDelete === true }, o.signal),
    watch: (o = {}) => watchLoop(o),
    status: (o = {}) =>
      ops.run({ records: false, mustExist: o.mustExist === true, signal: o.signal }, () => engine.status()),
    // Conflict copies carry the label the server holds for this host (as the engine's: context.ts hostTag).
    restore: (request, o = {}) =>
      ops.run(syncing(o.signal), async () =>
        noteSuccess(await restoreAt(engine, request, () => heard?.label ?? toHex(store.hostId).slice(0, 8))),
      ),
    async close(o = {}) {
      if (closed) return;
      closed = true;
      await ops.drained();
      // A first run that failed before it agreed anything with the server (a typo refused, a token
      // refused, no server, bytes out of reach) leaves no `.ferry/`: the folder is as it was.
      const unbound = fresh && (binding.bound === null || (!succeeded && agreedNothing(store)));
      if (o.atExit !== true || unbound) {
        store.close();
        binding.close();
      } else {
        store.keepFingerprints();
      }
      if (unbound) removeUnboundStore(root);
      await transport.close();
    },
  };
}

/** hello's refusal of a position in a history the workspace deleted (PROTOCOL.md §4.1). */
function isWorkspaceDeleted(e: unknown): boolean {
  return e instanceof ProtocolError && e.code === "workspace_deleted";
}
