/**
 * Writing a pulled file's temporary with the thread pool's help (write-slots.ts):
 * the same steps as writeFileTemp, its two costly system calls (open, which
 * creates the file, and writev) handed to libuv's pool so that the main
 * thread decides and decodes the next entries meanwhile; the cheap ones
 * after them (futimes, fstat, close) made here, which costs less than
 * three more trips through the pool (measured: BENCHMARKS.md section 15).
 * Only for a file whose every chunk the fetcher already holds: nothing is
 * asked of the server or read back from the disk here.
 */
import { closeSync, open, writev } from "node:fs";
import type { Change } from "../../protocol/changes.ts";
import { RefusedPath } from "./disk.ts";
import type { ObjectParts } from "./fetch-objects.ts";
import { CREATE_MODE_MASK, finishTemp, partsAfter, SAFE_MODE_MASK } from "./write-file.ts";

type Done<T> = (e: NodeJS.ErrnoException | null, value: T) => void;

/**
 * One callback-style fs call as a promise. The fs function is looked up at
 * each call (not bound once), as the disk-full test patches it.
 */
function pooled<T>(start: (done: Done<T>) => void): Promise<T> {
  return new Promise((resolve, reject) => start((e, value) => (e ? reject(e) : resolve(value))));
}

/** writeFileTemp for a file whose chunks are all in `chunks`, in order; returns its chunk lengths and fingerprint. */
export async function writeFileTempPooled(
  temp: string,
  c: Change & { kind: "file" },
  chunks: readonly ObjectParts[],
): Promise<{ sizes: number[]; stat: string | null }> {
  const sizes = chunks.map((b) => b.byteLength);
  let left = sizes.reduce((a, b) => a + b, 0);
  if (left !== c.size) {
    // As writeFileTemp, which finds it once the bytes are written: refused, not fatal (PROTOCOL.md §4.5 rule 6).
    throw new RefusedPath(c.path, `its chunks hold ${left} bytes, the entry says ${c.size}`);
  }
  const mode = c.mode & SAFE_MODE_MASK;
  const fd = await pooled<number>((done) => open(temp, "wx", mode & CREATE_MODE_MASK, done));
  try {
    let parts = chunks.flatMap((b) => b.parts);
    while (left > 0) {
      const n = await pooled<number>((done) => writev(fd, parts, done));
      left -= n;
      if (left > 0) parts = partsAfter(parts, n);
    }
    return { sizes, stat: finishTemp(fd, c, mode) };
  } finally {
    closeSync(fd);
  }
}
