/**
 * The ferry host library (the package's main export): keep a directory in
 * sync with a workspace.
 *
 *   const ws = openWorkspace(root, { url, workspace, token });
 *   const report = await ws.sync();    // report.sent, report.received: the paths moved
 *   await ws.watch({ signal });        // live until signal aborts
 *   await ws.close();
 *
 * Underneath, for hosts that assemble their own: the store, the scanner's
 * ignore rules, both transports and the engine:
 *
 *   const engine = new SyncEngine({ root, store: openStore("disk", root), transport: new HttpTransport(endpoint) });
 *   await engine.sync({ scan: false }); // trusts the store for the disk: a restore in one round trip
 */

export { type ErrorCode, ProtocolError } from "../protocol/errors.ts";
export { CHUNK_AVG, CHUNK_MAX, CHUNK_MIN, chunkLengths } from "./content/chunker.ts";
export { chunkFile, type FileChunks } from "./content/file-chunks.ts";
export type { MergeMode } from "./engine/decide.ts";
export { DEFAULT_MASS_DELETE, MassDeleteError, type MassDeleteRule } from "./engine/mass-delete.ts";
export type { Rename } from "./engine/renames.ts";
export type { PathChange, ProgressSink, ProgressTask, SyncMode, SyncReport } from "./engine/report.ts";
export type { StatusReport } from "./engine/status.ts";
export { type EngineOptions, SyncEngine, type SyncOptions } from "./engine/sync.ts";
export { type WatchOptions, watch } from "./engine/watch.ts";
export { NothingAtRevError, type RestoreReport, type RestoreRequest } from "./history/restore-at.ts";
export type { KeptCopy } from "./history/restore-guard.ts";
export { IGNORE_FILE, IgnoreRules, VCS_DIRS } from "./scan/ignore-rules.ts";
export { type Binding, BoundElsewhereError } from "./store/binding.ts";
export { findRoot, NestedRootError } from "./store/find-root.ts";
export { RootGoneError } from "./store/root-identity.ts";
export { openStore, STORE_DIR, STORE_FILE } from "./store/sqlite-store.ts";
export type { HostStore, PathRecord, StoreKind, StorePosition } from "./store/store.ts";
export { StoreCorruptError, StoreLockedError, StoreVersionError } from "./store/store-errors.ts";
export { HttpTransport, type HttpTransportOptions, NotFerryError } from "./transport/http-transport.ts";
export type { Endpoint, ServerEvents, Transport, TransportFactory } from "./transport/transport.ts";
export { WsTransport, type WsTransportOptions } from "./transport/ws-transport.ts";
export { FERRY_VERSION } from "./version.ts";
export {
  type CloseOptions,
  NoSuchWorkspaceError,
  type OperationOptions,
  openWorkspace,
  type PullOptions,
  type PushOptions,
  type StatusOptions,
  type Workspace,
  type WorkspaceOptions,
} from "./workspace/workspace.ts";
