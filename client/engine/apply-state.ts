/**
 * What the applier's parts (apply.ts, remove.ts) share during one pull: the
 * store seen through an overlay of record writes not yet committed, and the
 * disk seen from the root down.
 *
 * Store writes are buffered in the overlay and committed with the pull
 * cursor (`flush`), one transaction per page. A crash in between leaves files
 * on disk that the store does not know yet; the next sync rescans them and
 * adopts them when the same page arrives again.
 */
import type { BigIntStats } from "node:fs";
import { join } from "node:path";
import type { Change } from "../../protocol/changes.ts";
import type { Entry } from "../../protocol/entry.ts";
import { entrySignature } from "../common/entry-state.ts";
import { trace, traceEntry } from "../common/trace.ts";
import { mtimeMs, permBits, statKey } from "../scan/stat-key.ts";
import type { PathRecord } from "../store/store.ts";
import type { EngineContext } from "./context.ts";
import { type Ancestors, inspectAncestors, type KnownDirs } from "./disk.ts";
import { stampScan } from "./stamp.ts";

export class ApplyState {
  private readonly overlay = new Map<string, PathRecord | null>();
  /** Directories inspectAncestors found, until something that may remove one forgets them (`forgetDirs`). */
  private readonly knownDirs: KnownDirs = new Set();
  /** Directories this pull made (mkdir), until `forgetDirs`: nothing was under one before the pull. */
  private readonly madeDirs = new Set<string>();

  constructor(readonly ctx: EngineContext) {}

  /** The record of a path, including writes not yet flushed. */
  record(path: string): PathRecord | undefined {
    const r = this.overlay.get(path);
    return r === null ? undefined : (r ?? this.ctx.store.get(path));
  }

  /** Buffers a record write (null: forget the path) until the next flush. */
  setRecord(path: string, record: PathRecord | null): void {
    this.overlay.set(path, record);
  }

  /** Commits buffered record writes, and `also` (the pull cursor), in one transaction. */
  flush(also?: () => void): void {
    if (this.overlay.size === 0 && !also) return;
    this.ctx.store.transaction(() => {
      for (const [path, r] of this.overlay) {
        if (r) this.ctx.store.put(r);
        else this.ctx.store.remove(path);
      }
      also?.();
    });
    this.overlay.clear();
  }

  abs(path: string): string {
    return join(this.ctx.root, path);
  }

  /** True when a record's local change has not been acknowledged (EngineContext.isPending). */
  isPending(hostRev: number): boolean {
    return this.ctx.isPending(hostRev);
  }

  /** A directory may have gone or changed kind: ancestors are looked at again from the root. */
  forgetDirs(): void {
    this.knownDirs.clear();
    this.madeDirs.clear();
  }

  /** The applier made directory `dir` (mkdir succeeded: it was not there). */
  noteMade(dir: string): void {
    this.madeDirs.add(dir);
  }

  /**
   * True when `path`'s parent is a directory this pull made: what is at
   * `path` now, if anything, appeared during the pull, as it could have
   * right after a look. The applier then decides without an lstat (one
   * system call a file of a first pull, issue 13); the placement's link,
   * or its re-check, finds what appeared and keeps it.
   */
  underMadeDir(path: string): boolean {
    const slash = path.lastIndexOf("/");
    return slash > 0 && this.madeDirs.has(path.slice(0, slash));
  }

  /**
   * What `path`'s ancestors are on disk (disk.ts). Each directory found
   * corrects a stale pending record of it (restampStaleDir), wherever the
   * applier looks: deciding, making parents, removing.
   */
  ancestorsOf(path: string): Ancestors {
    return inspectAncestors(this.ctx.root, path, this.knownDirs, (dir, st) => this.restampStaleDir(dir, st));
  }

  /**
   * `dir` is a directory on disk. A pending record saying otherwise (a
   * symlink, a file, a deletion) was stamped before a local process made the
   * directory again, and no scan has seen it since. Pushed as it stands, it
   * would take the whole subtree off the server, with the server's consent
   * (this host has pulled it), this pull's own writes under it included, and
   * the host's records would call them synced. It is stamped again as the
   * directory the disk holds, as the next scan would, with the same base.
   */
  private restampStaleDir(dir: string, st: BigIntStats): void {
    const r = this.record(dir);
    if (!r || r.entry.kind === "dir" || !this.ctx.isPending(r.hostRev)) return;
    const entry: Entry = { kind: "dir", path: dir, mode: permBits(st), mtime: mtimeMs(st) };
    trace(() => `restamped ${dir} dir (was ${traceEntry(r.entry)}): a directory is there now`);
    this.setRecord(dir, { ...r, entry, sizes: [], stat: statKey(st) });
  }

  /** Scans `path` (and under it) and stamps what the store does not know yet. */
  stampUnder(path: string, includeSelf = false): void {
    this.flush();
    const result = this.ctx.scanner.scan(path);
    if (!includeSelf) {
      const i = result.changes.findIndex((s) => s.entry.path === path);
      if (i >= 0) result.changes.splice(i, 1);
    }
    stampScan(this.ctx.store, result);
  }
}

/**
 * The record of a path the server deleted and this host agreed to: kept
 * (not forgotten) so a reconcile can tell "deleted here" from "never here".
 */
export function tombstone(c: Change): PathRecord {
  const entry: Entry = { kind: "gone", path: c.path };
  return { entry, sizes: [], stat: null, hostRev: 0, serverRev: c.rev, agreed: entrySignature(entry) };
}
