/**
 * `ferry restore` never costs local work: what it replaces or removes is
 * either on the server (pushed first, so in the history) or kept as a
 * conflict copy, whether a `ferry sync --watch` holds the directory (the
 * watch then runs the restore, after the upload it was busy with) or not;
 * and a watch that would not run it leaves it refused, with nothing written.
 * The real CLI against the test server.
 */
import { randomBytes } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { HttpTransport } from "../../client/transport/http-transport.ts";
import { toHex } from "../../protocol/hash.ts";
import {
  type CliResult,
  childrenEndedAfterEach,
  cliEnv,
  endChild,
  ferry,
  ferryAsync,
  ferryRun,
  json,
  outputOf,
  serverStats,
} from "./support/cli.ts";
import { cleanup, endpointFor, newWorkspace, tempDir } from "./support/hosts.ts";
import { until } from "./support/until.ts";

afterEach(cleanup);
const running = childrenEndedAfterEach();

/**
 * Big enough that the watch is still uploading it for seconds after its
 * first batch lands (uploads go in batches of at most maxBodyBytes), when the restore asks.
 * 64 MiB was not, on a quiet machine: four batches in flight at once landed
 * with the push before the test looked (CI of 8490d4d).
 */
const BIG_BYTES = 192 * 1024 * 1024;

/** The contents `path` had, rev by rev from 1 to the head (each run of one content once): what the history can bring back. */
async function historyOf(ws: string, path: string): Promise<string[]> {
  const transport = new HttpTransport(endpointFor(ws, "r"));
  try {
    const head = (await serverStats(ws)).rev;
    const seen: string[] = [];
    for (let rev = 1; rev <= head; rev++) {
      const page = await transport.call("snapshot", { rev, path });
      const state = page.entries.find((e) => e.path === path);
      if (state?.kind !== "file") continue;
      const got =
        state.chunks.length === 0 ? { objects: [] } : await transport.call("getObjects", { hashes: state.chunks });
      const byHash = new Map(got.objects.map((o) => [toHex(o.hash), o.bytes]));
      const text = state.chunks.map((h) => Buffer.from(byHash.get(toHex(h)) as Uint8Array).toString("utf8")).join("");
      if (seen.at(-1) !== text) seen.push(text);
    }
    return seen;
  } finally {
    await transport.close();
  }
}

/** Bytes of the objects the server holds: they grow batch by batch while a push uploads. */
async function objectBytes(ws: string): Promise<number> {
  return ((await serverStats(ws)) as unknown as { objectBytes: number }).objectBytes;
}

/** A synced directory (rev 1 holds notes.txt and the file `build`), then changed and synced again. */
function setup(label: string) {
  const ws = newWorkspace();
  const env = cliEnv(ws, { FERRY_LABEL: "laptop" });
  const dir = tempDir(label);
  const sync = () => {
    const r = ferry(["sync", dir, "--json"], env);
    expect(r.status, r.stderr).toBe(0);
  };
  writeFileSync(join(dir, "notes.txt"), "as it was at rev 1\n");
  writeFileSync(join(dir, "build"), "build was a file at rev 1\n");
  sync();
  writeFileSync(join(dir, "notes.txt"), "pushed at rev 2\n");
  rmSync(join(dir, "build"));
  mkdirSync(join(dir, "build"));
  writeFileSync(join(dir, "build", "old.txt"), "pushed at rev 2\n");
  sync();
  return { ws, env, dir, sync };
}

/** Starts `ferry sync <dir> --watch`; resolves once it serves commands. */
async function startWatch(dir: string, env: NodeJS.ProcessEnv) {
  const child = ferryAsync(["sync", dir, "--watch", "--interval", "600000"], env);
  running.push(child);
  const log = outputOf(child);
  await until(
    () => `the watch of ${dir} to serve: ${log()}`,
    () => /watching/.test(log()) && existsSync(join(dir, ".ferry", "resident.sock")),
  );
  return { child, log };
}

/** Writes a big file for the watch to push, and resolves once the server is receiving it. */
async function busyUploading(ws: string, dir: string): Promise<void> {
  const before = await objectBytes(ws);
  // Written whole elsewhere and moved in: a watch that looks while a file is still being written may
  // push the part written so far first (an open issue of its own), and this test is about the upload.
  const whole = join(tempDir("big-bin"), "big.bin");
  writeFileSync(whole, randomBytes(BIG_BYTES));
  renameSync(whole, join(dir, "big.bin"));
  await until("the watch to be uploading big.bin", async () => (await objectBytes(ws)) > before);
}

/**
 * A watch busy pushing big.bin, and local work made meanwhile: an edit of
 * notes.txt and a new file in build/, saved "within a second" of every look
 * when `racy` (as under load: the restore of build must read it again,
 * restore-guard.ts). `restores` asks for notes.txt and build as of rev 1;
 * both must keep that work in the history.
 */
async function restoreBesideBusyWatch(
  label: string,
  { racy }: { racy: boolean },
  restores: (ask: (path: string) => Promise<CliResult>) => Promise<CliResult[]>,
) {
  const { ws, env, dir } = setup(label);
  const watch = await startWatch(dir, env);
  const { rev } = await serverStats(ws);
  await busyUploading(ws, dir);
  writeFileSync(join(dir, "notes.txt"), "an edit the restore must not lose\n");
  writeFileSync(join(dir, "build", "new.txt"), "made while the watch uploaded\n");
  if (racy) {
    const ahead = Date.now() / 1000 + 3600;
    utimesSync(join(dir, "build", "new.txt"), ahead, ahead);
  }
  expect((await serverStats(ws)).rev, "the watch's push of big.bin is still under way").toBe(rev);
  const results = await restores((path) => ferryRun(["restore", dir, path, "--rev", "1", "--json"], env));
  for (const r of results) expect(r.status, `${r.stderr}\n${watch.log()}`).toBe(0);
  expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("as it was at rev 1\n");
  expect(readFileSync(join(dir, "build"), "utf8")).toBe("build was a file at rev 1\n");
  const notes = await historyOf(ws, "notes.txt");
  expect(notes).toContain("an edit the restore must not lose\n");
  expect(notes.at(-1)).toBe("as it was at rev 1\n");
  expect(await historyOf(ws, "build/new.txt")).toEqual(["made while the watch uploaded\n"]);
  // The upload the restores waited for went through.
  expect((await serverStats(ws)).files).toBeGreaterThanOrEqual(3);
  await endChild(watch.child, "SIGINT");
}

describe("ferry restore beside a watch busy uploading", () => {
  it("pushes an edit and a directory's new file made meanwhile, before it restores over them", async () => {
    // Handed to the watch, which runs each once its upload is done; one after the other, as a person types them.
    await restoreBesideBusyWatch("restore-watch", { racy: false }, async (ask) => [
      await ask("notes.txt"),
      await ask("build"),
    ]);
  });

  it("runs two restores asked at once, one over a directory holding a file it must read again", async () => {
    // Both handed to the watch at once, which runs them one at a time, in either order, once its upload is done.
    await restoreBesideBusyWatch("restore-watch-both", { racy: true }, (ask) =>
      Promise.all([ask("notes.txt"), ask("build")]),
    );
  });
});

/**
 * Pushes `file` saved "within a second" of every look (its time ahead of the
 * clock), as a file a watch pushes right after its save: the store keeps no
 * fingerprint for it, only its state. Then restores `path` as of rev 1, which
 * must replace it without a copy: the server holds it.
 */
function restoreOverRacy(dir: string, env: NodeJS.ProcessEnv, file: string, path: string): void {
  writeFileSync(join(dir, file), "pushed a moment ago\n");
  const ahead = Date.now() / 1000 + 3600;
  utimesSync(join(dir, file), ahead, ahead);
  const pushed = ferry(["push", dir, "--json"], env);
  expect(pushed.status, pushed.stderr).toBe(0);
  const r = ferry(["restore", dir, path, "--rev", "1", "--json"], env);
  expect(r.status, r.stderr).toBe(0);
  expect(json<{ kept: unknown[] }>(r).kept).toEqual([]);
}

describe("ferry restore over what no history holds", () => {
  it("keeps an ignored file of the directory it replaces, as a conflict copy, and exits 3", async () => {
    const { dir, env } = setup("restore-ignored");
    writeFileSync(join(dir, ".ferryignore"), "*.o\n");
    writeFileSync(join(dir, "build", "cache.o"), "ignored: on no server, in no history\n");
    const r = ferry(["restore", dir, "build", "--rev", "1", "--json"], env);
    expect(r.status, r.stderr).toBe(3);
    expect(readFileSync(join(dir, "build"), "utf8")).toBe("build was a file at rev 1\n");
    const { kept } = json<{ kept: { path: string; copy: string }[] }>(r);
    expect(kept).toHaveLength(1);
    expect(kept[0]?.path).toBe("build");
    expect(kept[0]?.copy).toMatch(/^build\.conflict-laptop-\d{8}-\d{6}$/);
    const copy = join(dir, kept[0]?.copy as string);
    expect(readdirSync(copy).sort()).toEqual(["cache.o", "old.txt"]);
    expect(readFileSync(join(copy, "cache.o"), "utf8")).toBe("ignored: on no server, in no history\n");
    const text = ferry(["restore", dir, "notes.txt", "--rev", "1"], env);
    expect(text.status, text.stderr).toBe(0);
  });

  it("keeps an ignored file it would overwrite, as a conflict copy beside it", async () => {
    const { dir, env } = setup("restore-ignored-file");
    writeFileSync(join(dir, ".ferryignore"), "*.txt\n");
    writeFileSync(join(dir, "notes.txt"), "written once ignored: on no server\n");
    const r = ferry(["restore", dir, "notes.txt", "--rev", "1", "--json"], env);
    expect(r.status, r.stderr).toBe(3);
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("as it was at rev 1\n");
    const { kept } = json<{ kept: { path: string; copy: string }[] }>(r);
    expect(kept.map((k) => k.path)).toEqual(["notes.txt"]);
    expect(kept[0]?.copy).toMatch(/^notes\.conflict-laptop-\d{8}-\d{6}\.txt$/);
    expect(readFileSync(join(dir, kept[0]?.copy as string), "utf8")).toBe("written once ignored: on no server\n");
  });

  it("replaces without a copy a file the server holds though its fingerprint is not trusted", async () => {
    const { ws, dir, env } = setup("restore-racy");
    restoreOverRacy(dir, env, "notes.txt", "notes.txt");
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("as it was at rev 1\n");
    expect(readdirSync(dir).filter((n) => n.includes(".conflict-"))).toEqual([]);
    expect(await historyOf(ws, "notes.txt")).toContain("pushed a moment ago\n");
  });

  it("removes a directory whose pushed file has no trusted fingerprint, reading it where it was moved", async () => {
    const { ws, dir, env } = setup("restore-racy-dir");
    // The restore reads the file again from where the directory now is (moved aside whole), not where it was.
    restoreOverRacy(dir, env, "build/new.txt", "build");
    expect(readFileSync(join(dir, "build"), "utf8")).toBe("build was a file at rev 1\n");
    expect(readdirSync(dir).filter((n) => n.includes(".conflict-") || n.startsWith(".ferry-tmp-"))).toEqual([]);
    expect(await historyOf(ws, "build/new.txt")).toEqual(["pushed a moment ago\n"]);
  });

  it("names the copy it keeps on stderr", async () => {
    const { dir, env } = setup("restore-ignored-text");
    writeFileSync(join(dir, ".ferryignore"), "build/cache.o\n");
    writeFileSync(join(dir, "build", "cache.o"), "ignored\n");
    const r = ferry(["restore", dir, "build", "--rev", "1"], env);
    expect(r.status, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/^ferry: conflict: kept the local build as build\.conflict-laptop-[0-9-]+ \(/m);
  });
});

describe("ferry restore beside a watch that would not run it", () => {
  it("is refused with the lock's error, and writes nothing", async () => {
    const { dir, env } = setup("restore-refused");
    const watch = await startWatch(dir, env);
    writeFileSync(join(dir, "notes.txt"), "an edit the watch may not have pushed yet\n");
    // The flag: FERRY_LABEL is weaker than the label the folder remembers, and would be served.
    const r = ferry(["restore", dir, "notes.txt", "--rev", "1", "--label", "another"], env);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^ferry: store_locked: .* \(its watch would not run this command: another label/);
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("an edit the watch may not have pushed yet\n");
    await endChild(watch.child, "SIGINT");
  });
});
