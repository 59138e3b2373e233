/**
 * Checks, independently of the client's pull, that the server holds a tree:
 * every path with its kind, permission bits, size, chunk list (computed here
 * with the client's chunker from the bytes on disk) and symlink target, and
 * every chunk's object. bench:push runs it after each push before recording
 * the push's time.
 */
import { lstatSync, readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { chunkFile } from "../../client/content/file-chunks.ts";
import { ORIGIN } from "../../protocol/cursor.ts";
import { joinHashes, toHex } from "../../protocol/hash.ts";
import { LIMITS } from "../../protocol/limits.ts";
import type { FerryHttp } from "./http.ts";

export interface ExpectedTree {
  /** Path to `kind mode size chunks` / `symlink target` / `dir mode`. */
  readonly lines: ReadonlyMap<string, string>;
  readonly hashes: readonly Uint8Array[];
}

/** What a faithful push of `root` leaves on the server (names in `exclude` skipped at any depth). */
export function expectTree(root: string, exclude: readonly string[] = [".ferry"]): ExpectedTree {
  const lines = new Map<string, string>();
  const hashes = new Map<string, Uint8Array>();
  const walk = (rel: string) => {
    for (const name of readdirSync(rel === "" ? root : join(root, rel))) {
      if (exclude.includes(name)) continue;
      const path = rel === "" ? name : `${rel}/${name}`;
      const abs = join(root, path);
      const st = lstatSync(abs);
      if (st.isSymbolicLink()) lines.set(path, `symlink ${readlinkSync(abs)}`);
      else if (st.isDirectory()) {
        lines.set(path, `dir ${st.mode & 0o7777}`);
        walk(path);
      } else if (st.isFile()) {
        const { size, chunks } = chunkFile(abs);
        for (const h of chunks) hashes.set(toHex(h), h);
        lines.set(path, `file ${st.mode & 0o7777} ${size} ${chunks.map(toHex).join(",")}`);
      }
    }
  };
  walk("");
  return { lines, hashes: [...hashes.values()] };
}

/** Throws with the first differences unless the workspace holds exactly `expected`. */
export async function verifyServerHolds(http: FerryHttp, expected: ExpectedTree): Promise<{ entries: number }> {
  const held = new Map<string, string>();
  for (let after = ORIGIN; ; ) {
    const page = await http.call("changes", { after, limit: LIMITS.maxPageEntries });
    for (const e of page.entries) {
      if (e.kind === "file") held.set(e.path, `file ${e.mode} ${e.size} ${e.chunks.map(toHex).join(",")}`);
      else if (e.kind === "dir") held.set(e.path, `dir ${e.mode}`);
      else if (e.kind === "symlink") held.set(e.path, `symlink ${e.target}`);
    }
    if (!page.more) break;
    after = page.next;
  }
  const problems: string[] = [];
  for (const [path, line] of expected.lines) {
    if (held.get(path) !== line)
      problems.push(`${path}: expected ${line.slice(0, 80)}, server ${held.get(path)?.slice(0, 80)}`);
  }
  for (const path of held.keys()) if (!expected.lines.has(path)) problems.push(`${path}: on the server only`);
  for (let i = 0; i < expected.hashes.length; i += LIMITS.maxHas) {
    const batch = expected.hashes.slice(i, i + LIMITS.maxHas);
    const { have } = await http.call("has", { hashes: joinHashes(batch) });
    have.forEach((h, j) => {
      if (h !== 1) problems.push(`object ${toHex(batch[j] as Uint8Array)} missing`);
    });
  }
  if (problems.length > 0) {
    throw new Error(
      `server does not hold the tree: ${problems.length} problems\n  ${problems.slice(0, 10).join("\n  ")}`,
    );
  }
  return { entries: held.size };
}
