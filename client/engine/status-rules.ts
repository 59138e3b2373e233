/**
 * The ignore rules a pull would leave, for `ferry status` and `--dry-run`
 * (status.ts): a `.ferryignore` among the changes to pull rules the
 * changes after it, and when it lets go of paths this host left alone,
 * the sync compares the whole state (ignored-left.ts). The look reads
 * those files' bytes from the server (small objects, read only) and judges
 * with the rules they make.
 */
import type { Change } from "../../protocol/changes.ts";
import { hashesEqual, toHex } from "../../protocol/hash.ts";
import { sha256Sync } from "../content/hash.ts";
import { type IgnoreRules, ruleFileDir } from "../scan/ignore-rules.ts";
import type { EngineContext } from "./context.ts";

/**
 * The rules once the `.ferryignore` changes among `changes` that the pull
 * would write (`pulls`: not a local change, not one this host holds) are
 * pulled; null when there are none, or one cannot be read.
 */
export async function rulesAfterPull(
  ctx: EngineContext,
  changes: readonly Change[],
  pulls: (c: Change) => boolean,
): Promise<IgnoreRules | null> {
  const brought = new Map<string, Change>();
  for (const c of changes) {
    const dir = ruleFileDir(c.path);
    if (dir !== null && pulls(c) && !ctx.ignore.ignoresPathOrAncestor(c.path, false)) brought.set(dir, c);
  }
  if (brought.size === 0) return null;
  const texts = new Map<string, string | null>();
  for (const [dir, c] of brought) {
    const text = c.kind === "file" ? await readText(ctx, c.chunks) : null;
    if (c.kind === "file" && text === null) return null;
    texts.set(dir, text);
  }
  return ctx.ignore.withFiles(texts);
}

/** A rule file's text from its chunks; null when the server did not send them all. */
async function readText(ctx: EngineContext, chunks: readonly Uint8Array[]): Promise<string | null> {
  if (chunks.length === 0) return "";
  const answer = await ctx.call("getObjects", { hashes: chunks });
  const got = new Map<string, Uint8Array>();
  for (const o of answer.objects) if (hashesEqual(sha256Sync(o.bytes), o.hash)) got.set(toHex(o.hash), o.bytes);
  const parts = chunks.map((h) => got.get(toHex(h)));
  if (parts.some((p) => p === undefined)) return null;
  return Buffer.concat(parts as Uint8Array[]).toString("utf8");
}
