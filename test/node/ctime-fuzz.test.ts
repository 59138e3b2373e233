/**
 * Seeded rewrites that keep a file's size and mtime (and often its inode),
 * made with the tools users run: `cp -p`, a write then `touch -r`,
 * `rsync -a -I`, a tar extract, a truncate and rewrite given its time back;
 * mixed with changes of nothing but the ctime (a chmod there and back, a
 * hard link added and removed, `touch -r` to the time it had). Every file
 * has the same size and the same 1-second mtime, as after an archive's
 * extract. Meanwhile another host edits some of the same files, and some of
 * its pulls are raced by the same kind of rewrite right before the pull
 * replaces a file or right after it placed one. After each round: every
 * version anyone wrote is on both hosts (at its path or as a conflict copy:
 * nothing lost), the hosts agree, the first sync sent exactly the files whose
 * bytes changed, and a pull followed by a scan reads again none of the files
 * it placed with new bytes.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  linkSync,
  lstatSync,
  readdirSync,
  readFileSync,
  truncateSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { IgnoreRules } from "../../client/scan/ignore-rules.ts";
import { Scanner } from "../../client/scan/scanner.ts";
import { cleanup, type Host, newWorkspace, openHost, TRANSPORTS, tempDir } from "./support/hosts.ts";
import { prng } from "./support/soak-writer.ts";
import { pastRacyWindow } from "./support/tree.ts";

afterEach(cleanup);

const factory = (TRANSPORTS[0] as (typeof TRANSPORTS)[number]).factory;
/** Every file's mtime, to the second, as an archive gives it. */
const T = 1_700_000_000;
const FILES = Array.from({ length: 10 }, (_, i) => `f${i}.txt`);
const SIZE = 24;
const SEEDS = [1, 2].map((n) => Number(process.env.FERRY_FUZZ_SEED ?? 0) + n);

function run(cmd: string, args: readonly string[]): void {
  const r = spawnSync(cmd, args, { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")}: ${r.stderr}`);
}

/** The state of every file in `root` but the store, by name (conflict copies included): its text, mtime (ms) and mode. */
function states(root: string): Map<string, { text: string; line: string }> {
  const out = new Map<string, { text: string; line: string }>();
  for (const name of readdirSync(root).sort()) {
    if (name === ".ferry") continue;
    const text = readFileSync(join(root, name), "utf8");
    const st = lstatSync(join(root, name));
    out.set(name, {
      text,
      line: `${JSON.stringify(text)} @${Math.floor(st.mtimeMs)} ${(st.mode & 0o7777).toString(8)}`,
    });
  }
  return out;
}

const lines = (m: Map<string, { line: string }>) => Object.fromEntries([...m].map(([name, s]) => [name, s.line]));

describe("rewrites that keep size and mtime, by the tools that make them", { timeout: 300_000 }, () => {
  it.each(SEEDS)("seed %i: every version reaches both hosts and nothing is read again after a pull", async (seed) => {
    const random = prng(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
    const text = () =>
      `${Array.from({ length: SIZE - 1 }, () => String.fromCharCode(97 + Math.floor(random() * 26))).join("")}\n`;
    const ws = newWorkspace();
    const outside = tempDir("ctime-outside");
    /** The race armed for the reader's next pull: a rewrite of `path` before its replace or after its placement. */
    let race: { path: string; when: "before" | "after"; text: string } | null = null;
    const racedRewrite = (host: () => Host, path: string, when: "before" | "after") => {
      if (race === null || race.path !== path || race.when !== when) return;
      const abs = join(host().root, path);
      writeFileSync(abs, race.text);
      utimesSync(abs, T, T);
      race = null;
    };
    const editor = openHost(ws, { storeKind: "disk", factory });
    let readerHost: Host | null = null;
    const reader = openHost(ws, {
      storeKind: "disk",
      factory,
      beforeReplace: (path) => racedRewrite(() => readerHost as Host, path, "before"),
      afterPlace: (path) => racedRewrite(() => readerHost as Host, path, "after"),
    });
    readerHost = reader;
    for (const f of FILES) {
      writeFileSync(join(editor.root, f), text());
      utimesSync(join(editor.root, f), T, T);
    }
    await pastRacyWindow();
    await editor.engine.sync();
    await reader.engine.sync();
    const log: string[] = [];
    for (let round = 0; round < 5; round++) {
      const before = states(editor.root);
      for (let i = 0; i < 6; i++) {
        const y = pick(FILES);
        const x = pick(FILES);
        const abs = join(editor.root, y);
        let op = pick(["cp-p", "touch-r", "rsync", "tar", "truncate", "chmod", "link", "touch-same"] as const);
        if (op === "cp-p" && x === y) op = "touch-same";
        log.push(`${round}:${op}:${y}`);
        const fresh = text();
        if (op === "cp-p") run("cp", ["-p", join(editor.root, x), abs]);
        else if (op === "touch-r") {
          writeFileSync(abs, fresh);
          run("touch", ["-r", join(editor.root, x), abs]);
        } else if (op === "rsync" || op === "tar") {
          const src = tempDir("ctime-src");
          writeFileSync(join(src, y), fresh);
          utimesSync(join(src, y), T, T);
          if (op === "rsync") run("rsync", ["-a", "-I", join(src, y), abs]);
          else {
            run("tar", ["-cf", join(src, "t.tar"), "-C", src, y]);
            run("tar", ["-xf", join(src, "t.tar"), "-C", editor.root]);
          }
        } else if (op === "truncate") {
          truncateSync(abs, 0);
          writeFileSync(abs, fresh);
          utimesSync(abs, T, T);
        } else if (op === "chmod") {
          chmodSync(abs, 0o600);
          chmodSync(abs, 0o644);
        } else if (op === "link") {
          linkSync(abs, join(outside, "second-name"));
          unlinkSync(join(outside, "second-name"));
        } else run("touch", ["-r", join(editor.root, x), abs]);
      }
      const after = states(editor.root);
      // Changed: its bytes, or its mtime (`cp -p` and `touch -r` of a file that had another).
      const changed = [...after].filter(([name, s]) => before.get(name)?.line !== s.line).map(([name]) => name);
      // The reader edits one of the files too, at another size, and syncs first: the editor's version
      // of it, if it changed, becomes a conflict copy on the editor.
      const contested = random() < 0.5 ? pick(FILES) : null;
      const contestedText = `${text()}reader ${round}\n`;
      if (contested !== null) writeFileSync(join(reader.root, contested), contestedText);
      // Past the racy window, so that what each sync records is trusted and only the ctime can tell.
      await pastRacyWindow();
      if (contested !== null) await reader.engine.sync();
      const sent = await editor.engine.sync();
      const what = `seed ${seed} round ${round} (${log.join(" ")})`;
      const expectedSent = [...changed.filter((f) => f !== contested), ...sent.conflicts.map((c) => c.copy)].sort();
      const sentPaths = sent.sent.map((s) => s.path).filter((p) => p !== contested);
      expect(sentPaths.sort(), `${what}: sent`).toEqual(expectedSent);
      // The reader's pull, raced half the time by a rewrite that keeps size and mtime.
      // A file whose bytes changed: one whose mtime alone moved (`touch -r` from a file the other host
      // wrote) is pulled as metadata, with no replace for the race to run at.
      const racedPath = changed.find((f) => f !== contested && before.get(f)?.text !== after.get(f)?.text);
      let raced: { path: string; when: "before" | "after"; text: string } | null = null;
      if (racedPath !== undefined && random() < 0.5) {
        raced = { path: racedPath, when: random() < 0.5 ? "before" : "after", text: text() };
        race = raced;
        log.push(`race:${raced.when}:${racedPath}`);
      }
      await reader.engine.sync();
      if (raced === null) {
        // A file pulled as metadata alone (its mtime or mode moved, not its bytes) keeps no fingerprint
        // by design (apply.ts: a save between the re-check and utimes would pass for the server's
        // bytes) and is read once more; every file placed with new bytes is trusted as placed.
        const metadataOnly = changed.filter((f) => f !== contested && before.get(f)?.text === after.get(f)?.text);
        const scan = new Scanner(reader.root, reader.store, IgnoreRules.load(reader.root, [])).scan();
        expect(scan.changes, `${what}: a scan after the reader's pull`).toEqual([]);
        expect(scan.hashedFiles, `${what}: files read again after the reader's pull`).toBeLessThanOrEqual(
          metadataOnly.length,
        );
      }
      expect(race, `${what}: the race ran`).toBe(null);
      for (const last of [false, true]) {
        // The last two after the racy window: a file read within it is read again, and trusted then.
        if (last) await pastRacyWindow();
        await editor.engine.sync();
        await reader.engine.sync();
      }
      const onEditor = states(editor.root);
      expect(lines(states(reader.root)), `${what}: the hosts agree`).toEqual(lines(onEditor));
      // Every version a host held when it synced is still held, at its path or as a conflict copy, but
      // for one the other host had seen and then wrote over (its edit of a file it did not contest,
      // the rewrite right after a placement): that one is in the path's history.
      const mustKeep = [...after]
        .filter(([name]) => !(name === contested && !changed.includes(name)))
        .filter(([name]) => !(raced?.when === "after" && name === raced.path))
        .map(([, s]) => s.text);
      if (contested !== null) mustKeep.push(contestedText);
      if (raced !== null) mustKeep.push(raced.text);
      const held = new Set([...onEditor.values()].map((s) => s.text));
      for (const t of mustKeep) expect(held.has(t), `${what}: lost ${JSON.stringify(t)}`).toBe(true);
    }
  });
});
