/**
 * The soak's writers: seeded random operations on hosts' directories (create,
 * edit, append, rename, delete, chmod, type swaps between file, directory and
 * symlink), over a small set of names so that hosts collide on the same paths.
 *
 * Every file version written is unique (it names its writer and step), and
 * the ledger keeps which versions must survive: a version stops being owed
 * only when a writer replaces or deletes it having read it on its own disk
 * (a user who saw it), never because a sync did. At the end every owed
 * version must be in the tree: at its path, at a rename target or in a
 * conflict copy (the check looks for its content anywhere).
 */
import { createHash } from "node:crypto";
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";

/** mulberry32: small, seeded, good enough to pick operations. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

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

  made(content: string, path: string, what: string): void {
    this.owed.set(digest(content), { path, what });
  }

  /** A writer read this path on its own disk and is about to replace or remove it: what it saw is not owed. */
  saw(abs: string): void {
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(abs);
    } catch {
      return;
    }
    if (st.isDirectory()) {
      for (const name of readdirSync(abs)) if (name !== ".ferry") this.saw(join(abs, name));
    } else if (st.isFile()) this.owed.delete(digest(readFileSync(abs)));
  }
}

export class Writer {
  private step = 0;

  constructor(
    private readonly name: string,
    private readonly root: string,
    private readonly random: () => number,
    private readonly ledger: Ledger,
  ) {}

  /** One random operation; those whose preconditions do not hold on this disk right now are skipped. */
  act(): void {
    const op = this.pick(OPS);
    try {
      if (this.run(op)) this.ledger.ops++;
      else this.ledger.skipped++;
    } catch (e) {
      // The watcher's pull moved something under us (ENOENT, ENOTDIR, EEXIST...): a skipped step.
      if (typeof (e as NodeJS.ErrnoException).code !== "string") throw e;
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
        return true;
      }
      if (kind === "dir") return false;
      this.ledger.saw(abs);
      if (kind === "symlink") rmSync(abs);
      writeFileSync(abs, this.version(path));
      return true;
    }
    // The other operations act on something this host has now.
    const present = listTree(this.root);
    const files = present.filter((p) => p.kind === "file");
    const target = op === "append" || op === "chmod" ? this.maybe(files) : this.maybe(present);
    if (!target) return false;
    const { path, kind } = target;
    const abs = join(this.root, path);
    switch (op) {
      case "append": {
        const before = readFileSync(abs, "utf8");
        this.ledger.saw(abs);
        const after = `${before}${this.content()}`;
        writeFileSync(abs, after);
        this.ledger.made(after, path, `${this.name} appended to ${path}: ${JSON.stringify(after)}`);
        return true;
      }
      case "chmod":
        chmodSync(abs, this.pick(MODES));
        return true;
      case "rename": {
        const to = this.path();
        if (to === path || to.startsWith(`${path}/`) || !this.makeParents(to)) return false;
        if (kindAt(join(this.root, to)) !== null) return false;
        renameSync(abs, join(this.root, to));
        return true;
      }
      case "delete":
        this.ledger.saw(abs);
        rmSync(abs, { recursive: true, force: true });
        return true;
      case "swap":
        this.ledger.saw(abs);
        rmSync(abs, { recursive: true, force: true });
        if (kind === "file") {
          mkdirSync(abs);
          writeFileSync(join(abs, "inner"), this.version(`${path}/inner`));
        } else if (kind === "dir") symlinkSync(`target-${this.name}-${this.step}`, abs);
        else writeFileSync(abs, this.version(path));
        return true;
    }
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

  /** A new unique file version; the ledger owes it from now on. */
  private version(path: string): string {
    const text = this.content();
    this.ledger.made(text, path, `${this.name} wrote ${path}: ${JSON.stringify(text)}`);
    return text;
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

function kindAt(abs: string): "file" | "dir" | "symlink" | null {
  try {
    const st = lstatSync(abs);
    return st.isSymbolicLink() ? "symlink" : st.isDirectory() ? "dir" : "file";
  } catch {
    return null;
  }
}

/** Every path under root but the store, with its kind. */
function listTree(root: string): { path: string; kind: "file" | "dir" | "symlink" }[] {
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
