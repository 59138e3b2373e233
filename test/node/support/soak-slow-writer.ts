/**
 * The soak's slow writer (issue 26 case 5): now and then, on a random host,
 * a large file (1 to 3 MiB) is written in blocks with pauses between them,
 * as a download or a copy onto a slow disk does, while the other writers
 * and the watchers go on. Its finished content is a version the ledger owes
 * (support/soak-writer.ts); what a watcher saw half-written is owed by no
 * one, and must not have replaced anything owed.
 *
 * The file is written in place through one descriptor, as Writer.writeFile
 * does: what it destroys is what it read when it opened the file, and a
 * file a pull replaced or removed meanwhile (the writes then went to a file
 * no longer in the tree) is counted as raced, not owed. Other writers leave
 * it alone while it is written (Ledger.writing): an append into it would
 * make a version the slow writer then overwrites unread.
 */
import { closeSync, fstatSync, ftruncateSync, lstatSync, mkdirSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { actUntil, digest, type Ledger, openInPlace } from "./soak-writer.ts";

const NAMES = ["big/x", "big/y", "big/z"];
const BLOCK = 128 * 1024;

export class SlowWriter {
  private step = 0;

  constructor(
    private readonly roots: readonly string[],
    private readonly random: () => number,
    private readonly ledger: Ledger,
  ) {}

  /** Writes large files slowly until `done()` says the run is over. */
  run(done: () => boolean): Promise<void> {
    return actUntil(
      done,
      () => 200 + this.random() * 800,
      () => this.writeOne(),
      this.ledger,
      "slow",
    );
  }

  private async writeOne(): Promise<void> {
    const host = Math.floor(this.random() * this.roots.length);
    const root = this.roots[host] as string;
    const path = NAMES[Math.floor(this.random() * NAMES.length)] as string;
    const abs = join(root, path);
    mkdirSync(join(root, "big"), { recursive: true });
    const text = this.content(host, 1 + Math.floor(this.random() * 3));
    const bytes = Buffer.from(text);
    this.ledger.writing.add(`h${host}:${path}`);
    const fd = openInPlace(abs);
    const ino = fstatSync(fd).ino;
    this.ledger.writingInodes.add(ino);
    try {
      const before = readFileSync(fd);
      this.ledger.destroyed(before, abs);
      ftruncateSync(fd, 0);
      this.ledger.note(`slow h${host} begins ${path} (${bytes.byteLength} bytes)`);
      for (let off = 0; off < bytes.byteLength; ) {
        const end = Math.min(bytes.byteLength, off + BLOCK);
        while (off < end) off += writeSync(fd, bytes, off, end - off, off);
        await sleep(10 + this.random() * 40);
      }
      this.ledger.made(text, path, `slow h${host} wrote ${path} (${bytes.byteLength} bytes)`);
      if (inodeAt(abs) !== fstatSync(fd).ino) {
        this.ledger.raced++;
        this.ledger.owed.delete(digest(text));
        this.ledger.note(`raced: ${path} was replaced while the slow writer on h${host} wrote it`);
      }
    } finally {
      closeSync(fd);
      this.ledger.writing.delete(`h${host}:${path}`);
      this.ledger.writingInodes.delete(ino);
    }
  }

  /** Unique text of about `mib` MiB: a header naming the write, then lines that vary. */
  private content(host: number, mib: number): string {
    const id = `slow h${host} step ${++this.step} ${this.random().toString(36).slice(2)}`;
    const lines: string[] = [`${id}\n`];
    let size = lines[0]?.length ?? 0;
    for (let i = 0; size < mib * 1024 * 1024; i++) {
      const line = `${id} line ${i} ${"-".repeat(48)}\n`;
      lines.push(line);
      size += line.length;
    }
    return lines.join("");
  }
}

function inodeAt(abs: string): number | null {
  try {
    return lstatSync(abs).ino;
  } catch {
    return null;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
