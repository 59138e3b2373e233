/**
 * Deterministic trees shaped like a real node_modules, for sweeping tree size:
 * packages of a few to a few dozen files in nested dirs, most files small
 * (log-normal sizes, median ~1.3 KB, calibrated on this repo's node_modules:
 * p50 1.4 KB, p90 17 KB), about 1 in 800 large (hundreds of KB to 3 MiB, so
 * several chunks), some empty, a LICENSE shared byte-for-byte by many
 * packages (real trees dedupe), executables, and `.bin` symlinks.
 * Same seed and size, same tree: paths, modes and bytes.
 */
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Random } from "./random.ts";

export interface TreeSummary {
  readonly files: number;
  readonly dirs: number;
  readonly symlinks: number;
  readonly bytes: number;
}

const WORDS = ["index", "util", "core", "parse", "types", "stream", "buffer", "event", "path", "config", "cli"];
const SUBDIRS = ["lib", "dist", "src", "lib/internal", "dist/esm", "dist/cjs", "types", "lib/utils/helpers"];
const EXTS = [".js", ".js", ".js", ".d.ts", ".js.map", ".json", ".mjs", ".cjs"];
const LICENSES = [0, 1, 2].map((i) =>
  Buffer.from(`MIT License ${i}\n\n${"Permission is hereby granted. ".repeat(35)}\n`),
);

/** Writes a tree of exactly `files` regular files under `root` (created). */
export function generateTree(root: string, files: number, seed = 1): TreeSummary {
  const rng = new Random(seed ^ files);
  const made = new Set<string>();
  let written = 0;
  let bytes = 0;
  let symlinks = 0;
  const mkdir = (dir: string) => {
    if (made.has(dir)) return;
    mkdirSync(join(root, dir), { recursive: true });
    const parts = dir.split("/");
    for (let i = 1; i <= parts.length; i++) made.add(parts.slice(0, i).join("/"));
  };
  const write = (path: string, content: Buffer, mode = 0o644) => {
    writeFileSync(join(root, path), content);
    if (mode !== 0o644) chmodSync(join(root, path), mode);
    written++;
    bytes += content.length;
  };
  mkdir(".bin");

  for (let p = 0; written < files; p++) {
    const name = rng.chance(0.1) ? `@scope-${p % 7}/pkg-${p}` : `pkg-${p}`;
    // One package in ten is nested inside an earlier one, as npm does on version conflicts.
    const dir = p > 10 && rng.chance(0.1) ? `pkg-${rng.int(0, p - 1)}/node_modules/${name}` : name;
    mkdir(dir);
    const budget = Math.min(files - written, Math.max(1, Math.round(rng.logNormal(9, 1.1))));
    let left = budget;
    write(`${dir}/package.json`, rng.bytes(rng.int(300, 2500)));
    left--;
    if (left > 0 && rng.chance(0.7)) {
      write(`${dir}/LICENSE`, rng.pick(LICENSES));
      left--;
    }
    if (left > 0 && rng.chance(0.2)) {
      mkdir(`${dir}/bin`);
      write(`${dir}/bin/cli.js`, rng.bytes(rng.int(200, 4000)), 0o755);
      left--;
      symlinkSync(`../${dir}/bin/cli.js`, join(root, ".bin", `${name.replace("/", "-")}`));
      symlinks++;
    }
    const dirs = [".", ...Array.from({ length: rng.int(0, 2) }, () => rng.pick(SUBDIRS))];
    for (let f = 0; left > 0; f++, left--) {
      const sub = rng.pick(dirs);
      const at = sub === "." ? dir : `${dir}/${sub}`;
      mkdir(at);
      write(`${at}/${rng.pick(WORDS)}-${f}${rng.pick(EXTS)}`, rng.bytes(fileSize(rng)));
    }
  }
  return { files: written, dirs: made.size, symlinks, bytes };
}

function fileSize(rng: Random): number {
  if (rng.chance(0.01)) return 0;
  if (rng.chance(1 / 800)) return Math.min(3 * 1024 * 1024, Math.round(rng.logNormal(400_000, 0.8)));
  return Math.min(256 * 1024, Math.round(rng.logNormal(1300, 1.6)));
}
