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
  /** The moments of a pull where tests make a local save race it (EngineOptions.applyHooks). */
  applyHooks: ApplyHooks = {};
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

/**
 * The moments of a pull's apply where a local save races it: tests make
 * that race happen here (EngineOptions.applyHooks); nothing else sets them.
 */
export interface ApplyHooks {
  /**
   * Called with a path after its new bytes are downloaded, right before the
   * pull re-checks it and renames over it (or unlinks it).
   */
  readonly beforeReplace?: (path: string) => void | Promise<void>;
  /**
   * Called with a path after that re-check passed, right before the rename
   * or unlink itself: a write landing here was made after the check, and is
   * found under the second name the applier holds the file by, or (at a path
   * the check found empty) stays where the new file is then not linked
   * (replace-guard.ts). A new file is linked with no re-check first: here,
   * right before that link, and a write landing here is then re-checked
   * and kept as a conflict copy.
   */
  readonly atReplace?: (path: string) => void;
  /**
   * Called with a path right after the pull put a file, symlink or
   * directory there: for a symlink or directory before it reads the
   * fingerprint it records, for a file after (taken from the file's
   * descriptor at once). A local change landing here must not pass for the
   * server's state.
   */
  readonly afterPlace?: (path: string) => void;
}
