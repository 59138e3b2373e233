/**
 * The soak's writers: seeded random operations on hosts' directories (create,
 * edit, append, rename, delete, chmod, type swaps between file, directory and
 * symlink), over a small set of names so that hosts collide on the same paths.
 *
 * Every file version written is unique (it names its writer and step), and
 * the ledger keeps which versions must survive: a version stops being owed
 * only when a writer destroys it itself (overwrites, truncates or deletes it
 * on its own disk), never because a sync did. What a writer destroys is
 * exactly what it read from the file it changed: files are written in place
 * through one descriptor, and deleted by moving them out of the tree first,
 * so a version a pull brings in meanwhile is never forgiven unseen. At the
 * end every owed version must be in the tree: at its path, at a rename
 * target or in a conflict copy (the check looks for its content anywhere).
 */
import { createHash } from "node:crypto";
import {
  chmodSync,
  closeSync,
  fstatSync,
  ftruncateSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeSync,
} from "node:fs";
import { join, relative } from "node:path";

// The seeded generator lives with the core tests, which workerd can import too.
export { prng } from "../../core/prng.ts";

const DIRS = ["", "d", "e", "e/f"];
const NAMES = ["a", "b", "c", "d", "e", "f"];
const MODES = [0o644, 0o600, 0o755];
const OPS = ["write", "write", "append", "rename", "delete", "chmod", "swap", "mkdir"] as const;
export type Op = (typeof OPS)[number];

export const digest = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");

export class Ledger {
  /** Content digests of versions no writer replaced knowingly. */
  readonly owed = new Map<string, { readonly path: string; readonly what: string }>();
  ops = 0;
  skipped = 0;
  /**
   * Writes into a file that a pull replaced or removed while the writer held
   * it open (an editor saving into a file renamed over under it): the bytes
   * went to a file no longer in the tree, which no sync can see. Counted, not owed.
   */
  raced = 0;
  /** What happened when, for a failure's diagnosis. */
  readonly log: string[] = [];
  /** `<writer>:<path>` of files the slow writer is writing (soak-slow-writer.ts): no one appends to them meanwhile. */
  readonly writing = new Set<string>();
  /**
   * Their inodes: a pull may move such a file to a conflict copy while the
   * slow writer still writes through its descriptor (soak seed 5), where a
   * write by another writer would be overwritten by the slow one's next
   * block, destroyed by a writer, not by a sync. writeInPlace leaves them alone.
   */
  readonly writingInodes = new Set<number>();

  note(line: string): void {
    this.log.push(`${Date.now()} ${line}`);
  }

  made(content: string, path: string, what: string): void {
    this.note(`made ${digest(content).slice(0, 10)} ${what}`);
    this.owed.set(digest(content), { path, what });
  }

  /**
   * A writer destroyed these bytes (overwrote, truncated or removed them, from
   * the very file it changed): they are not owed, seen or not. Forgiving
   * exactly what was destroyed, read from the same file descriptor or moved
   * out of the tree first, keeps a version a pull brought in meanwhile owed.
   */
  destroyed(bytes: Uint8Array, where: string): void {
    const d = digest(bytes);
    if (this.owed.delete(d)) this.note(`destroyed ${d.slice(0, 10)} at ${where}`);
  }

  /** Everything under `abs`, which a writer moved out of the tree to delete it. */
  destroyedTree(abs: string): void {
    const st = lstatSync(abs);
    if (st.isDirectory()) {
      for (const name of readdirSync(abs)) this.destroyedTree(join(abs, name));
    } else if (st.isFile()) this.destroyed(readFileSync(abs), abs);
  }
}

export class Writer {
  private step = 0;

  constructor(
    private readonly name: string,
    private readonly root: string,
    /** A directory outside the tree on the same filesystem, where deleted paths are moved to be read (takeAway). */
    private readonly grave: string,
    private readonly random: () => number,
    private readonly ledger: Ledger,
  ) {}

  /** One random operation; those whose preconditions do not hold on this disk right now are skipped. */
  act(): void {
    const op = this.pick(OPS);
    this.ledger.note(`${this.name} ${op}`);
    try {
      if (this.run(op)) this.ledger.ops++;
      else this.ledger.skipped++;
    } catch (e) {
      // The watcher's pull moved something under us (ENOENT, ENOTDIR, EEXIST...): a skipped step.
      if (typeof (e as NodeJS.ErrnoException).code !== "string") throw e;
      this.ledger.note(`${this.name} skipped: ${(e as Error).message}`);
      this.ledger.skipped++;
    }
  }

  private run(op: Op): boolean {
    if (op === "write" || op === "mkdir") {
      const path = this.path();
      const abs = join(this.root, path);
      if (!this.makeParents(path)) return false;
      const kind = kindAt(abs);
      if (op === "mkdir") {
        if (kind !== null) return false;
        mkdirSync(abs);
        this.ledger.note(`${this.name} made ${path}`);
        return true;
      }
      if (kind === "dir") return false;
      if (kind === "symlink") this.takeAway(abs);
      const text = this.content();
      this.writeFile(abs, path, () => ({ text, at: 0 }), `${this.name} wrote ${path}`);
      return true;
    }
    // The other operations act on something this host has now.
    const present = listTree(this.root);
    const files = present.filter((p) => p.kind === "file" && !this.ledger.writing.has(`${this.name}:${p.path}`));
    const target = op === "append" || op === "chmod" ? this.maybe(files) : this.maybe(present);
    if (!target) return false;
    const { path, kind } = target;
    const abs = join(this.root, path);
    switch (op) {
      case "append": {
        const extra = this.content();
        this.writeFile(
          abs,
          path,
          (before) => ({ text: `${before}${extra}`, at: before.length }),
          `${this.name} appended to ${path}`,
        );
        return true;
      }
      case "chmod": {
        const mode = this.pick(MODES);
        chmodSync(abs, mode);
        this.ledger.note(`${this.name} chmod ${path} ${mode.toString(8)}`);
        return true;
      }
      case "rename": {
        const to = this.path();
        if (to === path || to.startsWith(`${path}/`) || !this.makeParents(to)) return false;
        const toAbs = join(this.root, to);
        if (kindAt(toAbs) !== null) return false;
        if (kind === "dir") {
          // Replaces nothing but an empty directory appearing meanwhile (else ENOTEMPTY, ENOTDIR).
          renameSync(abs, toAbs);
          return true;
        }
        // link, then unlink: unlike rename, never replaces a file a pull put at `to` meanwhile.
        linkSync(abs, toAbs);
        const linked = lstatSync(toAbs).ino;
        this.takeAway(abs, linked);
        this.ledger.note(`${this.name} renamed ${path} to ${to}`);
        return true;
      }
      case "delete":
        this.takeAway(abs);
        return true;
      case "swap":
        this.takeAway(abs);
        if (kind === "file") {
          mkdirSync(abs);
          const text = this.content();
          this.writeFile(
            join(abs, "inner"),
            `${path}/inner`,
            () => ({ text, at: 0 }),
            `${this.name} wrote ${path}/inner`,
          );
        } else if (kind === "dir") {
          symlinkSync(`target-${this.name}-${this.step}`, abs);
          this.ledger.note(`${this.name} linked ${path}`);
        } else {
          const text = this.content();
          this.writeFile(abs, path, () => ({ text, at: 0 }), `${this.name} wrote ${path}`);
        }
        return true;
    }
  }

  private writeFile(
    abs: string,
    path: string,
    next: (before: string) => { text: string; at: number },
    what: string,
  ): void {
    writeInPlace(this.ledger, abs, path, next, what);
  }

  /**
   * Deletes a path by moving it out of the tree first (one atomic step, as
   * ferry sees it), then forgives exactly what was moved. With `ino`, only
   * that file was meant (the source of a rename, linked at its target): anything
   * else found there was put by a pull meanwhile and destroyed by the writer.
   */
  private takeAway(abs: string, ino?: number | bigint): void {
    const moved = join(this.grave, `${this.name}-${++this.step}`);
    renameSync(abs, moved);
    this.ledger.note(`${this.name} took away ${relative(this.root, abs)}`);
    if (ino === undefined || lstatSync(moved).ino !== ino) this.ledger.destroyedTree(moved);
    rmSync(moved, { recursive: true, force: true });
  }

  /** mkdir -p of a path's parents; false when a file or symlink is in the way. */
  private makeParents(path: string): boolean {
    let rel = "";
    for (const s of path.split("/").slice(0, -1)) {
      rel = rel ? `${rel}/${s}` : s;
      const kind = kindAt(join(this.root, rel));
      if (kind === null) mkdirSync(join(this.root, rel));
      else if (kind !== "dir") return false;
    }
    return true;
  }

  private maybe<T>(from: readonly T[]): T | undefined {
    return from.length === 0 ? undefined : this.pick(from);
  }

  /** A new unique line. */
  private content(): string {
    return `${this.name} step ${++this.step} ${this.random().toString(36).slice(2)}\n`;
  }

  private path(): string {
    const dir = this.pick(DIRS);
    const name = this.pick(NAMES);
    return dir === "" ? name : `${dir}/${name}`;
  }

  private pick<T>(from: readonly T[]): T {
    return from[Math.floor(this.random() * from.length)] as T;
  }
}

/**
 * Writes a file in place, as an editor or a logger does: opened once (made
 * when absent, never over something a pull put there meanwhile), read,
 * then written through the same descriptor from `at` on, so what it
 * destroys is exactly what it read. The new version is owed unless a pull
 * replaced or removed the file while it was open (Ledger.raced).
 */
export function writeInPlace(
  ledger: Ledger,
  abs: string,
  path: string,
  next: (before: string) => { text: string; at: number },
  what: string,
): void {
  const fd = openInPlace(abs);
  try {
    if (ledger.writingInodes.has(fstatSync(fd).ino))
      throw Object.assign(new Error(`${path} is being written by the slow writer`), { code: "EBUSY" });
    const before = readFileSync(fd);
    const { text, at } = next(before.toString("utf8"));
    if (at === 0) {
      ledger.destroyed(before, abs);
      ftruncateSync(fd, 0);
    }
    const bytes = Buffer.from(text.slice(at));
    for (let off = 0; off < bytes.byteLength; ) off += writeSync(fd, bytes, off, bytes.byteLength - off, at + off);
    ledger.made(text, path, `${what}: ${JSON.stringify(text)}`);
    if (at > 0) ledger.destroyed(before, abs);
    const here = lstatOrNull(abs);
    if (here?.ino !== fstatSync(fd).ino) {
      ledger.raced++;
      ledger.owed.delete(digest(text));
      ledger.note(`raced: ${path} was replaced while it was written (${what})`);
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Runs `act` after each `pause()` ms until `done()` says the run is over
 * (the slow and the subtree writers). A step a watcher's pull broke (it
 * moved a path under the writer: ENOENT, ENOTDIR, EEXIST...) is noted under
 * `label` and skipped.
 */
export async function actUntil(
  done: () => boolean,
  pause: () => number,
  act: () => void | Promise<void>,
  ledger: Ledger,
  label: string,
): Promise<void> {
  while (!done()) {
    await new Promise((r) => setTimeout(r, pause()));
    if (done()) return;
    try {
      await act();
    } catch (e) {
      if (typeof (e as NodeJS.ErrnoException).code !== "string") throw e;
      ledger.note(`${label} skipped: ${(e as Error).message}`);
    }
  }
}

/** Opens a file to write it in place: made when absent, never over something a pull put there meanwhile. */
export function openInPlace(abs: string): number {
  try {
    return openSync(abs, "r+");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    return openSync(abs, "wx+");
  }
}

function lstatOrNull(abs: string): ReturnType<typeof lstatSync> | null {
  try {
    return lstatSync(abs);
  } catch {
    return null;
  }
}

export function kindAt(abs: string): "file" | "dir" | "symlink" | null {
  try {
    const st = lstatSync(abs);
    return st.isSymbolicLink() ? "symlink" : st.isDirectory() ? "dir" : "file";
  } catch {
    return null;
  }
}

/** Every path under root but the store, with its kind. */
export function listTree(root: string): { path: string; kind: "file" | "dir" | "symlink" }[] {
  const out: { path: string; kind: "file" | "dir" | "symlink" }[] = [];
  const walk = (rel: string) => {
    for (const name of readdirSync(join(root, rel)).sort()) {
      if (name === ".ferry" || name.startsWith(".ferry-tmp-")) continue;
      const path = rel ? `${rel}/${name}` : name;
      const kind = kindAt(join(root, path));
      if (kind === null) continue;
      out.push({ path, kind });
      if (kind === "dir") walk(path);
    }
  };
  walk("");
  return out;
}

/** Every file's content digest under root (the store and nothing else left out). */
export function contentDigests(root: string): Set<string> {
  const out = new Set<string>();
  const walk = (abs: string) => {
    for (const name of readdirSync(abs)) {
      if (name === ".ferry") continue;
      const p = join(abs, name);
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile()) out.add(digest(readFileSync(p)));
    }
  };
  walk(root);
  return out;
}
