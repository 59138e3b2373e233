/**
 * The applier: carries one server change out on disk and in the store, in
 * steps that go one way: look and decide (apply-decide.ts), then record the
 * decision, write the server's state (write-entry.ts) or remove (remove.ts,
 * which also keeps a local change in the way as a conflict copy). Paths are
 * checked from the root down with lstat (disk.ts), so nothing outside the
 * root is ever written.
 *
 * Record writes go through the pull's overlay (apply-state.ts), committed
 * with the pull cursor.
 */
import { type BigIntStats, chmodSync, lstatSync, utimesSync } from "node:fs";
import type { Change } from "../../protocol/changes.ts";
import type { Entry } from "../../protocol/entry.ts";
import { entrySignature, sameState, signatureMatches } from "../common/entry-state.ts";
import { trace, traceEntry } from "../common/trace.ts";
import { ruleFileDir } from "../scan/ignore-rules.ts";
import { statKey, utimeSeconds } from "../scan/stat-key.ts";
import type { PathRecord } from "../store/store.ts";
import { type Look, lookAndDecide, refuseUnderSyncedLink } from "./apply-decide.ts";
import { ApplyState, tombstone } from "./apply-state.ts";
import type { EngineContext } from "./context.ts";
import type { Decision, MergeMode } from "./decide.ts";
import { DirModes } from "./dir-modes.ts";
import { checkServerEntry, lstatOrNull } from "./disk.ts";
import type { ObjectFetcher } from "./fetch-objects.ts";
import { leftByPull, rulesLetGo } from "./ignored-left.ts";
import { checkRoom, refusalOf } from "./refusals.ts";
import { Remover } from "./remove.ts";
import { EntryWriter } from "./write-entry.ts";
import { SAFE_MODE_MASK } from "./write-file.ts";

/** Directories one change may unlock (dir-modes.ts) before its EACCES stands. */
const MAX_UNLOCKS = 16;

export class Applier {
  private readonly s: ApplyState;
  private readonly remover: Remover;
  private readonly writer: EntryWriter;
  /** Directory modes set when the pull ends (finishDirs). */
  private readonly dirModes: DirModes;

  constructor(
    private readonly ctx: EngineContext,
    fetcher: ObjectFetcher,
  ) {
    this.s = new ApplyState(ctx);
    this.remover = new Remover(this.s);
    this.dirModes = new DirModes(ctx.root);
    this.writer = new EntryWriter(ctx, this.s, this.remover, this.dirModes, fetcher);
  }

  /** The record of a path, including writes not yet flushed. */
  record(path: string): PathRecord | undefined {
    return this.s.record(path);
  }

  /** Commits buffered record writes, and `also` (the pull cursor), in one transaction. */
  flush(also?: () => void): void {
    this.s.flush(also);
  }

  /**
   * When the pull ends, however it ends: sets the directories' deferred
   * modes (dir-modes.ts), and records them. A record keeping the
   * fingerprint of the mode the pull held a directory at while it wrote
   * (0700) would match a later chmod back to it, which no scan would then
   * send (issue 27 item 7). Records are flushed by then (pull.ts).
   */
  finishDirs(): void {
    const store = this.ctx.store;
    const set = this.dirModes.finish();
    if (set.length === 0) return;
    store.transaction(() => {
      for (const d of set) {
        const r = store.get(d.path);
        if (r && r.stat === d.before) store.put({ ...r, stat: d.after });
      }
    });
  }

  /** At the end of a pull: directories kept for unsynced files that the pull has since emptied go (remove.ts). */
  settleKeptDirs(): void {
    this.remover.settleKeptDirs();
  }

  /** True when applying `c` will likely need its bytes (the host does not already have that state). */
  mayNeedBytes(c: Change): boolean {
    if (c.kind !== "file") return false;
    const r = this.s.record(c.path);
    if (!r) return true;
    // The host agreed to this very state before: the disk has it, or a local change wins over it.
    if (r.agreed !== null && signatureMatches(c, r.agreed)) return false;
    return !(r.entry.kind === "file" && sameState(r.entry, c));
  }

  /**
   * Applies one change. A change this machine cannot hold is reported and
   * skipped (refusals.ts), and the caller keeps it for the next pull; a full
   * disk throws. Returns the decision taken. `signature`: `c`'s
   * (entrySignature), when the caller took it already (the pull journal).
   */
  async apply(c: Change, mode: MergeMode, signature?: Uint8Array): Promise<Decision | "refused" | "ignored"> {
    try {
      checkServerEntry(c);
      if (this.ctx.ignore.ignoresPathOrAncestor(c.path, c.kind === "dir")) {
        leftByPull(this.ctx);
        return "ignored";
      }
      if (this.leftUnderOtherRules(c)) {
        trace(() => `apply ${c.path} rev ${c.rev} -> left for the whole-state compare: no record, a copy here`);
        leftByPull(this.ctx);
        return "ignored";
      }
      const decision = await this.applyUnlocking(c, mode, signature ?? entrySignature(c));
      // A `.ferryignore` the pull wrote, replaced or removed rules the rest of this pull and the push after it.
      const rulesAt = ruleFileDir(c.path);
      if (rulesAt !== null) this.ctx.ignore.reload(rulesAt);
      return decision;
    } catch (e) {
      const refused = refusalOf(e, c.path);
      if (!refused) throw e;
      trace(() => `refused ${c.path} ${traceEntry(c)} rev ${c.rev}: ${refused.reason}`);
      this.ctx.report.refused.push({ path: refused.path, reason: refused.reason });
      return "refused";
    }
  }

  /**
   * A path with no record but something on disk, met by a plain pull while
   * the rules no longer ignore what this host left alone under them (a
   * `.ferryignore` this pull brought, or edited here): the copy may be one
   * it kept while ignoring the path, stale since. Judged here it would be
   * local work in conflict with the server's; the whole-state compare that
   * follows (catch-up.ts pullWhatRulesLetGo) judges it by the server's
   * history instead, as a lost store's copy is.
   */
  private leftUnderOtherRules(c: Change): boolean {
    if (c.past !== undefined || this.s.record(c.path) !== undefined) return false;
    return rulesLetGo(this.ctx.store, this.ctx.ignore) && lstatOrNull(this.s.abs(c.path)) !== null;
  }

  /** applyChecked, again after each EACCES that unlocking a directory of ours may cure (dir-modes.ts). */
  private async applyUnlocking(c: Change, mode: MergeMode, agreed: Uint8Array): Promise<Decision> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.applyChecked(c, mode, agreed);
      } catch (e) {
        const err = e as NodeJS.ErrnoException;
        if (err.code !== "EACCES" || !err.path || attempt >= MAX_UNLOCKS) throw e;
        const unlocked = this.dirModes.unlock(err.path);
        if (unlocked.length === 0) throw e;
        for (const u of unlocked) {
          const r = this.s.record(u.path);
          if (r && r.stat === u.before) this.s.setRecord(u.path, { ...r, stat: u.after });
        }
        this.s.forgetDirs();
      }
    }
  }

  /** Decides (apply-decide.ts), then records, writes (write-entry.ts) or removes (remove.ts). */
  private async applyChecked(c: Change, mode: MergeMode, agreed: Uint8Array): Promise<Decision> {
    const ancestors = this.s.ancestorsOf(c.path);
    if (ancestors.state !== "ok" && c.kind === "gone") {
      // Nothing can be there: the server tombstones a subtree when its root becomes a file or a symlink.
      // Agreed as a tombstone at its rev, not forgotten: a path made there again is pushed with that
      // base, which the server takes; with none (0) it refused it as a conflict no pull could resolve.
      trace(() => `apply ${c.path} gone rev ${c.rev} -> adopt: no directory at ${ancestors.at}`);
      this.s.setRecord(c.path, tombstone(c));
      return "adopt";
    }
    if (ancestors.state === "blocked") refuseUnderSyncedLink(this.s, this.ctx, c.path, ancestors);
    const look = lookAndDecide(this.s, this.ctx, c, mode, ancestors.state === "ok");
    const { decision, record, current, sizes, stat } = look;
    // Nothing, or a file or symlink, is at the path: records under it (a directory there before, deleted
    // here and not scanned since) name paths this disk no longer has.
    const mayHaveUnder = !record || record.entry.kind === "dir" || record.entry.kind === "gone";
    if ((decision === "adopt" || decision === "keep-local") && current?.kind !== "dir" && mayHaveUnder) {
      this.remover.settleUnder(c.path, c.kind === "dir" ? 0 : c.rev);
    }
    // Before a conflict copy is made or a byte fetched: a file this disk has no room for.
    if ((decision === "apply" || decision === "conflict") && c.kind === "file")
      checkRoom(this.ctx.root, c.path, c.size);
    switch (decision) {
      case "metadata":
        return this.setMetadata(c, look, agreed);
      case "adopt":
        if (current === null) {
          this.s.setRecord(c.path, tombstone(c));
          // Deleted here as well, so no push of that deletion follows (soak seed 65).
          if (record) this.remover.removeEmptied(c.path);
        } else this.s.setRecord(c.path, { entry: current, sizes, stat, hostRev: 0, serverRev: c.rev, agreed });
        return decision;
      case "keep-local": {
        const hostRev = this.stamp(record, look.diskMatches);
        const kept =
          current === null
            ? { entry: { kind: "gone", path: c.path } as const, sizes: [], stat: null }
            : { entry: current, sizes, stat };
        this.s.setRecord(c.path, { ...kept, hostRev, serverRev: c.rev, agreed });
        return decision;
      }
      case "conflict":
        this.remover.preserve(c.path);
        // Nothing is there now: a save landing after the move is local work too, which the re-check keeps.
        await this.carryOut(c, null, agreed);
        return decision;
      case "apply":
        // Nothing touched the path since the look: the writer need not lstat it again.
        await this.carryOut(c, look.st, agreed);
        return decision;
    }
  }

  /** The server's state put on disk: a deletion by the remover, anything else by the writer. */
  private async carryOut(c: Change, known: BigIntStats | null, agreed: Uint8Array): Promise<void> {
    if (c.kind === "gone") await this.remover.removeLocal(c, known);
    else await this.writer.write(c, known, agreed);
  }

  /** Same bytes on disk: the server's mode and mtime set in place, nothing written or fetched. */
  private setMetadata(c: Change, { st, key, sizes }: Look, agreed: Uint8Array): Decision {
    const abs = this.s.abs(c.path);
    // Re-checked as a replace is: a save since the decision is local work, left for the next scan.
    if (st === null || statKey(lstatSync(abs, { bigint: true })) !== key) return "keep-local";
    this.ctx.applyHooks.atReplace?.(c.path);
    if (c.kind === "file") {
      chmodSync(abs, c.mode & SAFE_MODE_MASK);
      const seconds = utimeSeconds(c.mtime);
      utimesSync(abs, seconds, seconds);
    }
    const { rev: _rev, ...entry } = c;
    const placed = lstatSync(abs, { bigint: true });
    this.s.setRecord(c.path, {
      entry: entry as Entry,
      sizes,
      // A save landing between the re-check and utimes would take the server's mtime and pass
      // for the server's bytes: a file keeps no fingerprint, so the next scan reads it again.
      stat: c.kind === "file" ? null : statKey(placed),
      hostRev: 0,
      serverRev: c.rev,
      agreed,
    });
    return "metadata";
  }

  /** The host rev for a path the local side keeps: its own when already pending, else a new one. */
  private stamp(record: PathRecord | undefined, diskMatches: boolean): number {
    if (record && diskMatches && this.ctx.isPending(record.hostRev)) return record.hostRev;
    return this.ctx.store.reserveHostRevs(1);
  }
}
