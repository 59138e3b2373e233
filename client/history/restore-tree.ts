/**
 * Writes a path (and, for a directory, its tree) as it was at a rev back
 * into a host's directory (`ferry restore`): `snapshot` pages for the
 * states, `objects/get` for the bytes (each verified against its hash),
 * then each path written atomically (a temporary file renamed over it). The
 * result is an ordinary local change: the next sync pushes it.
 *
 * It never writes outside the root or through a symlink (disk.ts checks
 * every ancestor with lstat), what the directory holds besides the
 * restored paths is left alone, and what it replaces or removes goes only
 * when the server holds it (restore-guard.ts): local work is kept as a
 * conflict copy.
 */

import { chmodSync, mkdirSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { concatBytes } from "../../protocol/cbor-parts.ts";
import type { Change } from "../../protocol/changes.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import { hashesEqual, toHex } from "../../protocol/hash.ts";
import { sha256Sync } from "../content/hash.ts";
import { checkServerEntry, inspectAncestors, lstatOrNull, RefusedPath } from "../engine/disk.ts";
import { SAFE_MODE_MASK } from "../engine/write-file.ts";
import { TEMP_PREFIX } from "../scan/ignore-rules.ts";
import type { Transport } from "../transport/transport.ts";
import type { KeptCopy, RestoreGuard } from "./restore-guard.ts";

export interface RestoreResult {
  /** The paths written, in path order. */
  readonly written: readonly Change[];
  readonly bytes: number;
  /** What was in the way with local work on it, moved aside instead of replaced. */
  readonly kept: readonly KeptCopy[];
}

/** Every state under `path` (the whole workspace when undefined) at `rev`, following pages. */
export async function readSnapshot(transport: Transport, path: string | undefined, rev: number): Promise<Change[]> {
  const out: Change[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await transport.call("snapshot", {
      rev,
      ...(path !== undefined ? { path } : {}),
      ...(after !== undefined ? { after } : {}),
    });
    // A restore writes all of its paths or none: one no host may hold refuses it (as a blocked one does).
    const unreadable = page.unreadable?.[0];
    if (unreadable !== undefined) throw new RefusedPath(unreadable.path, unreadable.reason);
    out.push(...page.entries);
    if (page.next === undefined) return out;
    after = page.next;
  }
}

export async function restoreTree(
  root: string,
  transport: Transport,
  states: readonly Change[],
  guard: RestoreGuard,
): Promise<RestoreResult> {
  const bytes = await fetchVerified(transport, states);
  let written = 0;
  for (const state of states) {
    checkServerEntry(state);
    const ancestors = inspectAncestors(root, state.path);
    if (ancestors.state === "blocked") {
      throw new RefusedPath(
        state.path,
        `its ancestor '${ancestors.at}' is a ${ancestors.symlink ? "symlink" : "file"} here`,
      );
    }
    const abs = join(root, state.path);
    mkdirSync(dirname(abs), { recursive: true });
    if (state.kind === "dir") {
      const st = lstatOrNull(abs);
      if (st !== null && !st.isDirectory()) guard.removeFile(state.path, st);
      mkdirSync(abs, { recursive: true });
      chmodSync(abs, (state.mode & SAFE_MODE_MASK) | 0o700);
      continue;
    }
    const temp = join(dirname(abs), `${TEMP_PREFIX}restore-${process.pid}-${written}`);
    if (state.kind === "file") {
      const content = concatBytes(state.chunks.map((h) => bytes.get(toHex(h)) as Uint8Array));
      // As a pull writes it: never setuid or setgid from the server (write-file.ts).
      const mode = state.mode & SAFE_MODE_MASK;
      writeFileSync(temp, content, { mode });
      chmodSync(temp, mode);
      written += content.byteLength;
    } else if (state.kind === "symlink") symlinkSync(state.target, temp);
    else continue;
    // A directory in the way (the path was a file at that rev) goes when the history holds all of it.
    const st = lstatOrNull(abs);
    if (st?.isDirectory()) guard.removeDir(state.path);
    const place = () => renameSync(temp, abs);
    if (st !== null && !st.isDirectory()) guard.replaceFile(state.path, st, place);
    else place();
  }
  return { written: states, bytes: written, kept: guard.kept };
}

/** The bytes of every chunk the states name, from the server, each checked against its hash. */
async function fetchVerified(transport: Transport, states: readonly Change[]): Promise<Map<string, Uint8Array>> {
  const wanted = new Map<string, Uint8Array>();
  for (const s of states) if (s.kind === "file") for (const h of s.chunks) wanted.set(toHex(h), h);
  const got = new Map<string, Uint8Array>();
  let pending = [...wanted.values()];
  while (pending.length > 0) {
    const answer = await transport.call("getObjects", { hashes: pending });
    if (answer.missing.length > 0) {
      // Named in a retained state, so held until a pack was damaged behind the server's back, which it
      // then forgot (PROTOCOL.md §7.11): the restore writes all its paths or none.
      const lost = new Set(answer.missing.map(toHex));
      const paths = states
        .filter((s) => s.kind === "file" && s.chunks.some((h) => lost.has(toHex(h))))
        .map((s) => s.path);
      throw new ProtocolError(
        "object_damaged",
        `the server lost the bytes of ${paths.join(", ")} at that rev: a host that holds them uploads them again with 'ferry push --heal'`,
        { missing: answer.missing, paths },
      );
    }
    for (const o of answer.objects) {
      if (!hashesEqual(sha256Sync(o.bytes), o.hash)) {
        throw new ProtocolError("hash_mismatch", `the server sent bytes that do not match ${toHex(o.hash)}`, {
          hashes: [o.hash],
        });
      }
      got.set(toHex(o.hash), o.bytes);
    }
    pending = pending.filter((h) => !got.has(toHex(h)));
  }
  return got;
}
