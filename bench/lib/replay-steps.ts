/**
 * A sequence of real consecutive changes to replay: the published versions
 * of one npm package, unpacked in turn, as a working tree would see them
 * checked out one after the other. Each step's tree is the previous one with
 * only what the version changed written again (new files, changed content)
 * and what it dropped deleted, so an unchanged file keeps its mtime and
 * inode, as under `git checkout`; rsync's quick check and ferry's stat
 * fingerprints then see exactly the version's change. Tarballs come from the
 * npm registry through `npm pack` and are kept in bench/results/tmp/replay/
 * (not committed) for later runs.
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { RESULTS_DIR } from "./results.ts";

const CACHE = join(RESULTS_DIR, "tmp", "replay");

export interface ReplayStep {
  readonly version: string;
  /** The working tree after checking out this version. */
  readonly dir: string;
  readonly written: number;
  readonly deleted: number;
}

/** `hono@4.13.0`, `steps` 20: 4.13.0 and the 19 versions published after it, in order. */
export function versionsFrom(spec: string, steps: number): { name: string; versions: string[] } {
  const at = spec.lastIndexOf("@");
  if (at <= 0) throw new Error(`--replay: expected <package>@<first version>, got '${spec}'`);
  const name = spec.slice(0, at);
  const first = spec.slice(at + 1);
  const listFile = join(CACHE, `${name.replace("/", "+")}.versions.json`);
  let all: string[];
  if (existsSync(listFile)) all = JSON.parse(readFileSync(listFile, "utf8")) as string[];
  else {
    all = JSON.parse(execFileSync("npm", ["view", name, "versions", "--json"], { encoding: "utf8" })) as string[];
    mkdirSync(CACHE, { recursive: true });
    writeFileSync(listFile, JSON.stringify(all));
  }
  const start = all.indexOf(first);
  if (start < 0) throw new Error(`--replay: ${name} has no version ${first}`);
  const versions = all.slice(start, start + steps);
  if (versions.length < steps) throw new Error(`--replay: only ${versions.length} versions of ${name} from ${first}`);
  return { name, versions };
}

/** Unpacks each version (fetching its tarball once) and builds the step trees under `workDir`. */
export function buildReplaySteps(name: string, versions: readonly string[], workDir: string): ReplayStep[] {
  const steps: ReplayStep[] = [];
  let previous: string | null = null;
  for (const [i, version] of versions.entries()) {
    const unpacked = unpack(name, version, workDir);
    const dir = join(workDir, `step-${String(i).padStart(2, "0")}`);
    if (previous === null) {
      cpSync(unpacked, dir, { recursive: true });
      steps.push({ version, dir, written: countFiles(dir), deleted: 0 });
    } else {
      cpSync(previous, dir, { recursive: true, preserveTimestamps: true });
      steps.push({ version, dir, ...checkout(unpacked, dir) });
    }
    previous = dir;
  }
  return steps;
}

function unpack(name: string, version: string, workDir: string): string {
  const tarball = join(CACHE, `${name.replace("@", "").replace("/", "-")}-${version}.tgz`);
  if (!existsSync(tarball)) {
    mkdirSync(CACHE, { recursive: true });
    const packed = execFileSync("npm", ["pack", `${name}@${version}`, "--silent", "--pack-destination", CACHE], {
      encoding: "utf8",
    })
      .trim()
      .split("\n")
      .pop();
    if (packed === undefined || join(CACHE, packed) !== tarball) throw new Error(`npm pack gave '${packed}'`);
  }
  const out = join(workDir, "unpacked", version);
  mkdirSync(out, { recursive: true });
  execFileSync("tar", ["xzf", tarball, "-C", out, "--strip-components=1"]);
  return out;
}

/** Makes `dir` hold what `from` holds, writing only files whose bytes differ and deleting what `from` lacks. */
function checkout(from: string, dir: string): { written: number; deleted: number } {
  const wanted = new Set(listFiles(from));
  let written = 0;
  for (const rel of wanted) {
    const bytes = readFileSync(join(from, rel));
    const target = join(dir, rel);
    if (existsSync(target) && readFileSync(target).equals(bytes)) continue;
    mkdirSync(dirname(target), { recursive: true });
    rmSync(target, { force: true }); // a new inode, as a checkout writes it
    writeFileSync(target, bytes);
    written++;
  }
  let deleted = 0;
  for (const rel of listFiles(dir)) {
    if (wanted.has(rel)) continue;
    rmSync(join(dir, rel));
    deleted++;
  }
  removeEmptyDirs(dir);
  return { written, deleted };
}

function listFiles(root: string, rel = ""): string[] {
  const out: string[] = [];
  for (const d of readdirSync(join(root, rel), { withFileTypes: true })) {
    const path = rel === "" ? d.name : `${rel}/${d.name}`;
    if (d.isDirectory()) out.push(...listFiles(root, path));
    else out.push(path);
  }
  return out;
}

function countFiles(root: string): number {
  return listFiles(root).length;
}

function removeEmptyDirs(dir: string): boolean {
  let empty = true;
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    if (d.isDirectory() && removeEmptyDirs(join(dir, d.name))) rmdirSync(join(dir, d.name));
    else empty = false;
  }
  return empty;
}
