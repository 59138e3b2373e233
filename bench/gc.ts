/**
 * bench:gc — storage that tracks what it must keep. A real tree (packages
 * copied from this repository's node_modules) is pushed, every file is
 * rewritten ROUNDS times (a line appended, pushed each round), every other
 * file is deleted, and a collection runs with the history window and the
 * upload grace set to zero (Worker variables FERRY_HISTORY=0,
 * FERRY_UPLOAD_GRACE=0). Reported per sample: live and stored bytes before
 * and after (the bar: stored within 1.2x of live), what the collection
 * freed, the rows it read and wrote, its time and time per GiB freed; the
 * tree pulled back afterwards must match the host's (count and digest).
 *
 *   npm run bench:gc [-- --samples 3 --rounds 10]
 */
import { appendFileSync, cpSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { openWorkspace } from "../client/workspace/workspace.ts";
import type { StorageUsage } from "../protocol/stats.ts";
import { assertSameTree, digestTree } from "./lib/digest.ts";
import { markdownTable, REPO_DIR } from "./lib/results.ts";
import { openSession, runSession } from "./lib/session.ts";
import { fmt, summarize } from "./lib/stats.ts";

const PACKAGES = [
  "hono",
  "cbor-x",
  "commander",
  "ws",
  "@noble",
  "chokidar",
  "ignore",
  "smol-toml",
  "vitest",
  "tsx",
  "@vitest",
];
const session = openSession("gc", { rounds: { type: "string", default: "10" } });
const ROUNDS = session.quick ? 2 : Number(session.values.rounds);
const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

type Storage = StorageUsage;

interface Sample {
  files: number;
  before: Storage;
  after: Storage;
  freed: Record<string, number>;
  ms: number;
  ratioAfter: number;
  msPerGiBFreed: number;
}

function files(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const abs = join(dir, name);
      if (name === ".ferry") continue;
      const st = statSync(abs, { throwIfNoEntry: false });
      if (st?.isDirectory()) walk(abs);
      else if (st?.isFile()) out.push(relative(root, abs));
    }
  };
  walk(root);
  return out;
}

async function sample(i: number, url: string, token: string): Promise<Sample> {
  const workspace = `gc-${i}-${Date.now()}`;
  const root = join(session.tmp, `tree-${i}`);
  mkdirSync(root, { recursive: true });
  for (const p of PACKAGES)
    cpSync(join(REPO_DIR, "node_modules", p), join(root, p), { recursive: true, dereference: true });
  const host = openWorkspace(root, { url, workspace, token });
  const stats = async (): Promise<Storage> => {
    const res = await fetch(`${url}/v1/workspaces/${workspace}/stats`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return ((await res.json()) as { storage: Storage }).storage;
  };
  try {
    await host.push();
    const paths = files(root);
    for (let r = 1; r <= ROUNDS; r++) {
      for (const p of paths) appendFileSync(join(root, p), `\n/* ferry bench:gc round ${r} */\n`);
      await host.push();
      session.log(`sample ${i}: round ${r}/${ROUNDS} pushed (${paths.length} files)`);
    }
    paths.forEach((p, k) => {
      if (k % 2 === 1) rmSync(join(root, p));
    });
    await host.push();
    const before = await stats();
    const t0 = performance.now();
    const res = await fetch(`${url}/v1/workspaces/${workspace}/gc`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
    });
    const ms = performance.now() - t0;
    if (!res.ok) throw new Error(`gc answered ${res.status}: ${await res.text()}`);
    const run = (await res.json()) as { freed: Record<string, number> };
    const after = await stats();
    // What the server keeps must still be the whole tree: pull it into an empty directory and compare.
    const copy = join(session.tmp, `copy-${i}`);
    mkdirSync(copy);
    const puller = openWorkspace(copy, { url, workspace, token });
    try {
      await puller.pull();
    } finally {
      await puller.close();
    }
    assertSameTree("the tree pulled after the collection", digestTree(root), digestTree(copy));
    const freedBytes = before.storedBytes - after.storedBytes;
    return {
      files: paths.length,
      before,
      after,
      freed: run.freed,
      ms,
      ratioAfter: after.storedBytes / after.liveBytes,
      msPerGiBFreed: ms / (freedBytes / GiB),
    };
  } finally {
    await host.close();
  }
}

await runSession(session, async () => {
  const server = await session.startServer("server", { vars: { FERRY_HISTORY: "0", FERRY_UPLOAD_GRACE: "0" } });
  const token = server.token();
  const samples: Sample[] = [];
  for (let i = 1; i <= session.samples; i++) {
    samples.push(await sample(i, server.url, token));
    const s = samples.at(-1) as Sample;
    session.log(
      `sample ${i}: stored ${fmt(s.before.storedBytes / MiB, 1)} -> ${fmt(s.after.storedBytes / MiB, 1)} MiB, ` +
        `live ${fmt(s.after.liveBytes / MiB, 1)} MiB (${fmt(s.ratioAfter, 3)}x), ${s.freed.rowsWritten} rows written, ${fmt(s.ms)} ms`,
    );
  }
  const ms = summarize(samples.map((s) => s.ms));
  const perGiB = summarize(samples.map((s) => s.msPerGiBFreed));
  const table = markdownTable(
    [
      "sample",
      "files",
      "live MiB",
      "stored before MiB",
      "stored after MiB",
      "after / live",
      "objects freed",
      "versions dropped",
      "packs deleted / rewritten",
      "rows written",
      "rows read",
      "gc ms",
      "ms per GiB freed",
    ],
    samples.map((s, i) => [
      i + 1,
      s.files,
      fmt(s.after.liveBytes / MiB, 2),
      fmt(s.before.storedBytes / MiB, 1),
      fmt(s.after.storedBytes / MiB, 2),
      fmt(s.ratioAfter, 3),
      s.freed.objects ?? 0,
      s.freed.versions ?? 0,
      `${s.freed.packsDeleted} / ${s.freed.packsRewritten}`,
      s.freed.rowsWritten ?? 0,
      s.freed.rowsRead ?? 0,
      fmt(s.ms),
      fmt(s.msPerGiBFreed),
    ]),
  );
  const markdown = `${table}\n\ngc time min / median / max: ${fmt(ms.min)} / ${fmt(ms.median)} / ${fmt(ms.max)} ms; per GiB freed ${fmt(perGiB.median)} ms (median)\n`;
  session.publish(
    {
      rounds: ROUNDS,
      packages: PACKAGES,
      samples,
    },
    markdown,
  );
});
