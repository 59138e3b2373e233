/**
 * The soak's subtree writer (issue 26): now and then, on a random host, a
 * whole directory with files in it is removed at once (`rm -rf`), or, where
 * it is gone, made again with several files, some with new content and
 * some with content an earlier removal took (a checkout, an unpacked
 * archive, a reinstall), while the other writers and every host's watch go
 * on. `e/` is one the other writers also write into (soak-writer.ts), so a
 * removal here meets their files, and pulls of them, on every host; `lib/`
 * is deeper and this writer's own.
 *
 * A removal moves the directory out of the tree in one step, then forgives
 * exactly what it moved (Ledger.destroyedTree), as Writer.takeAway does: a
 * version a pull brought into it before the move is destroyed knowingly, one
 * that lands after is owed. It never takes half the tree or more: that is a
 * mass delete, which a host holds back (issue 26), not the ordinary
 * removal this writer stands for. Files are made in place
 * (writeInPlace), so a file a pull put there meanwhile is read and forgiven,
 * never replaced unseen.
 */
import { mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { actUntil, kindAt, type Ledger, listTree, writeInPlace } from "./soak-writer.ts";

const SUBTREES = ["e", "lib"];
/** Where files go in a subtree made again: its top, and two levels down. */
const INSIDE = ["", "x", "x/y"];
const NAMES = ["a", "b", "m", "n"];
/** Old contents kept for making again, at most. */
const KEPT = 32;

export class SubtreeWriter {
  private step = 0;
  /** Subtrees removed and made so far, for the run's summary. */
  removed = 0;
  made = 0;
  /** Contents of files earlier removals took, to make again. */
  private readonly taken: string[] = [];

  constructor(
    private readonly roots: readonly string[],
    /** Per host, a directory outside its tree on the same filesystem, where removed subtrees are moved to be read. */
    private readonly graves: readonly string[],
    private readonly random: () => number,
    private readonly ledger: Ledger,
  ) {}

  /** Removes or makes subtrees until `done()` says the run is over. */
  run(done: () => boolean): Promise<void> {
    return actUntil(
      done,
      () => 300 + this.random() * 1200,
      () => this.act(),
      this.ledger,
      "subtree",
    );
  }

  private act(): void {
    const host = Math.floor(this.random() * this.roots.length);
    const root = this.roots[host] as string;
    const path = this.pick(SUBTREES);
    const kind = kindAt(join(root, path));
    if (kind === "dir") this.remove(host, root, path);
    else if (kind === null) this.make(host, root, path);
  }

  /** `rm -rf path`, unless the files under it are half the tree or more. */
  private remove(host: number, root: string, path: string): void {
    const tree = listTree(root).filter((p) => p.kind === "file");
    const inside = tree.filter((p) => p.path.startsWith(`${path}/`)).length;
    if (inside === 0 || inside * 2 >= tree.length) return;
    const moved = join(this.graves[host] as string, `subtree-${++this.step}`);
    renameSync(join(root, path), moved);
    this.ledger.note(`subtree h${host} removed ${path} (${inside} of ${tree.length} files)`);
    this.removed++;
    this.keepContents(moved);
    this.ledger.destroyedTree(moved);
    rmSync(moved, { recursive: true, force: true });
  }

  /** Makes `path` again with a few files, about half of them holding content a removal took. */
  private make(host: number, root: string, path: string): void {
    const count = 2 + Math.floor(this.random() * 5);
    this.ledger.note(`subtree h${host} makes ${path} (${count} files)`);
    this.made++;
    for (let i = 0; i < count; i++) {
      const dir = this.pick(INSIDE);
      const rel = `${path}/${dir === "" ? "" : `${dir}/`}${this.pick(NAMES)}`;
      mkdirSync(join(root, rel, ".."), { recursive: true });
      const old = this.taken.length > 0 && this.random() < 0.5;
      const text = old ? this.pick(this.taken) : `subtree h${host} step ${++this.step} ${this.random().toString(36)}\n`;
      // A directory a pull (or another writer) put there meanwhile stays.
      if ((kindAt(join(root, rel)) ?? "file") !== "file") continue;
      writeInPlace(this.ledger, join(root, rel), rel, () => ({ text, at: 0 }), `subtree h${host} wrote ${rel}`);
    }
  }

  /** Remembers the contents of the files under `abs` (a removed subtree), the newest KEPT. */
  private keepContents(abs: string): void {
    for (const { path, kind } of listTree(abs)) {
      if (kind !== "file") continue;
      this.taken.push(readFileSync(join(abs, path), "utf8"));
      if (this.taken.length > KEPT) this.taken.shift();
    }
  }

  private pick<T>(from: readonly T[]): T {
    return from[Math.floor(this.random() * from.length)] as T;
  }
}
