/**
 * The ferry host library: keep a directory in sync with a workspace.
 *
 *   const store = openStore("disk", root);            // <root>/.ferry/store.db
 *   const transport = new HttpTransport({ url, workspace, token });
 *   const engine = new SyncEngine({ root, store, transport });
 *   const report = await engine.sync();                // hello, scan, pull, push
 *
 * `engine.sync({ scan: false })` trusts the store for the disk (a restore
 * after a restart: one round trip when nothing changed on either side).
 */
export { CHUNK_AVG, CHUNK_MAX, CHUNK_MIN, chunkLengths } from "./chunker.ts";
export type { MergeMode } from "./engine/decide.ts";
export type { ProgressSink, ProgressTask, SyncMode, SyncReport } from "./engine/report.ts";
export { type EngineOptions, type StatusReport, SyncEngine, type SyncOptions } from "./engine/sync.ts";
export { chunkFile, type FileChunks } from "./file-chunks.ts";
export { HttpTransport, type HttpTransportOptions } from "./http-transport.ts";
export { IGNORE_FILE, IgnoreRules } from "./ignore-rules.ts";
export { openStore, STORE_DIR, STORE_FILE, StoreLockedError, StoreVersionError } from "./store/sqlite-store.ts";
export type { HostStore, PathRecord, StoreKind, StorePosition } from "./store/store.ts";
export type { Endpoint, Transport, TransportFactory } from "./transport.ts";
