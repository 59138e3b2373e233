/**
 * What the parts of one sync share: the root, store, transport, ignore rules,
 * the report being filled, and what hello said. `call` is the only way the
 * engine talks to the server, so round trips are counted in one place.
 */

import type { Cursor } from "../../protocol/cursor.ts";
import { toHex } from "../../protocol/hash.ts";
import type { HelloResponse } from "../../protocol/hello.ts";
import type { OpName, OpRequest, OpResponse } from "../../protocol/ops.ts";
import { trace } from "../common/trace.ts";
import type { IgnoreRules } from "../scan/ignore-rules.ts";
import type { Scanner } from "../scan/scanner.ts";
import type { HostStore } from "../store/store.ts";
import type { Transport } from "../transport/transport.ts";
import type { ProgressSink, SyncReport } from "./report.ts";

export class EngineContext {
  /** The server's acked host cursor for this host, as last heard. */
  acked: Cursor = { rev: 0, path: null };
  /** Set by the engine once hello has answered. */
  hello: HelloResponse | null = null;
  /**
   * Names this host's conflict copies: the label the server holds for it
   * (hello), else the first 8 hex digits of its host id.
   */
  get hostTag(): string {
    return this.hello?.label ?? toHex(this.store.hostId).slice(0, 8);
  }
  /** Most entries per push pack: the server's maxEntries, or less when the host asks. */
  packEntriesCap = Number.MAX_SAFE_INTEGER;
  /**
   * Chunks (hex) this sync has seen the server hold: uploaded or found while
   * scanning (early-upload.ts). The push does not probe for them again; a
   * collection may still take one before the push names it (PROTOCOL.md
   * §7.9), which the push's `missing_objects` then answers by uploading it
   * again (push.ts).
   */
  readonly heldChunks = new Set<string>();
  /**
   * The early upload's last batches, answered while the scan is stamped and
   * the push's first pack is read and cut (scan-stamp.ts). Whatever reads
   * `heldChunks` to decide what to send, and any pull, awaits it first; it
   * never rejects (a failed batch leaves its chunks to the push).
   */
  uploadsLanding: Promise<void> = Promise.resolve();
  /** An upload of this sync found objects the server already held: uploads probe with `has` from then on (uploads.ts). */
  objectsPresent = false;
  /** Called right before the applier re-checks a path and replaces or removes it (EngineOptions.beforeReplace). */
  beforeReplace: ((path: string) => void | Promise<void>) | null = null;
  /**
   * Called after that re-check passed, right before the rename or unlink (EngineOptions.atReplace); for a
   * new file, which is linked without a re-check first (replace-guard.ts placeIfEmpty), right before the link.
   */
  atReplace: ((path: string) => void) | null = null;
  /**
   * Called right after the pull put a file, symlink or directory at a path (EngineOptions.afterPlace):
   * before it takes a symlink's or directory's fingerprint, after a file's (its descriptor's, at once).
   */
  afterPlace: ((path: string) => void) | null = null;
  /** Throws once the root is not the folder the host opened (EngineOptions.checkRoot); called before each pack is pushed. */
  checkRoot: () => void = () => {};
  /**
   * The ignore rules' digest when a pull of this sync first left a server
   * change alone because this host ignores its path (ignored-left.ts); null
   * when none did (reset by each whole-state compare).
   */
  leftIgnoredUnder: string | null = null;

  constructor(
    readonly root: string,
    readonly store: HostStore,
    readonly transport: Transport,
    readonly ignore: IgnoreRules,
    readonly scanner: Scanner,
    readonly report: SyncReport,
    readonly progress: ProgressSink,
  ) {}

  get server(): HelloResponse {
    // The engine says hello before any other call; reaching here without it is a bug.
    if (!this.hello) throw new Error("sync: no hello yet");
    return this.hello;
  }

  async call<K extends OpName>(op: K, req: OpRequest<K>): Promise<OpResponse<K>> {
    this.report.roundTrips++;
    trace(() => `call ${op}`);
    const answer = await this.transport.call(op, req);
    trace(() => `answered ${op}`);
    return answer;
  }

  /** True when a record's local change has not been acknowledged by the server. */
  isPending(hostRev: number): boolean {
    return hostRev > this.acked.rev;
  }
}
