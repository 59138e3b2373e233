/**
 * bench:rows — what the core operations cost in SQLite, counted rather than
 * timed: statements, rows read and rows written (the SQL cursor's
 * rowsRead/rowsWritten, reported by the server per request in x-ferry-rows).
 * Durable Object SQLite bills these, writes at 1,000x reads. Each scenario
 * runs in two fresh workspaces and the counts must agree (counts do not flap).
 *
 *   npm run bench:rows [-- --files 1000]
 */
import { createHash, randomBytes } from "node:crypto";
import type { Cursor } from "../protocol/cursor.ts";
import type { Entry } from "../protocol/entry.ts";
import { joinHashes } from "../protocol/hash.ts";
import { LIMITS } from "../protocol/limits.ts";
import { type PushEntry, pushEntryOf } from "../protocol/push.ts";
import { PROTOCOL_VERSION } from "../protocol/version.ts";
import { FerryHttp, type SqlCounts } from "./lib/http.ts";
import { Random } from "./lib/random.ts";
import { markdownTable } from "./lib/results.ts";
import { openSession, runSession } from "./lib/session.ts";
import { fmt } from "./lib/stats.ts";

const session = openSession("rows", { files: { type: "string", default: "1000" } });
const FILES = Number(session.values.files);
const ORIGIN: Cursor = { rev: 0, path: null };

interface Step {
  readonly op: string;
  readonly entries: number;
  readonly rows: SqlCounts | null;
  readonly ms: number;
}

const sha = (b: Uint8Array) => new Uint8Array(createHash("sha256").update(b).digest());

/** One pass of every scenario in a fresh workspace; returns the steps in order. */
async function scenario(http: FerryHttp, seed: number): Promise<Step[]> {
  const rng = new Random(seed);
  const hostId = new Uint8Array(randomBytes(16));
  const reader = new Uint8Array(randomBytes(16));
  const steps: Step[] = [];
  const measure = async <T>(op: string, entries: number, call: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    const out = await call();
    steps.push({ op, entries, rows: http.lastRows, ms: performance.now() - t });
    return out;
  };
  const objects = Array.from({ length: FILES }, (_, i) => rng.bytes(200 + (i % 1800))).map((bytes) => ({
    hash: sha(bytes),
    bytes,
  }));
  const files: Entry[] = objects.map((o, i) => ({
    kind: "file",
    path: `file-${String(i).padStart(5, "0")}.js`,
    mode: 0o644,
    mtime: 1_700_000_000_000 + i,
    size: o.bytes.length,
    chunks: [o.hash],
  }));

  await measure("hello (new host)", 0, () =>
    http.call("hello", { version: PROTOCOL_VERSION, hostId, hostRev: 0, capabilities: [] }),
  );
  let stored = 0;
  for (let i = 0; i < objects.length; i += LIMITS.maxObjects) {
    const batch = objects.slice(i, i + LIMITS.maxObjects);
    const r = await measure(`upload ${batch.length} new objects`, 0, () => http.call("putObjects", { objects: batch }));
    stored += r.stored;
  }
  if (stored !== FILES) throw new Error(`expected ${FILES} objects stored, got ${stored}`);
  const pack = {
    hostId,
    start: ORIGIN,
    end: { rev: FILES, path: null },
    entries: files.map((f) => pushEntryOf(f)),
    objects: [],
  };
  const first = await measure(`push ${FILES} new one-chunk files`, FILES, () => http.call("push", pack));
  if (!first.applied) throw new Error("first push was not applied");
  const again = await measure("re-send of that pack (already applied)", FILES, () => http.call("push", pack));
  if (again.applied) throw new Error("re-sent pack was applied twice");
  const same = {
    hostId,
    start: pack.end,
    end: { rev: 2 * FILES, path: null },
    entries: files.map((f) => pushEntryOf(f)),
    objects: [],
  };
  await measure(`new pack, same ${FILES} entries unchanged`, FILES, () => http.call("push", same));

  const page = await measure(`changes: a page of ${FILES}`, FILES, () =>
    http.call("changes", { hostId: reader, after: ORIGIN, limit: FILES }),
  );
  if (page.entries.length !== Math.min(FILES, LIMITS.maxPageEntries)) {
    throw new Error(`page held ${page.entries.length} entries, expected ${FILES}`);
  }
  const { have } = await measure(`has: probe of ${FILES} held hashes`, 0, () =>
    http.call("has", { hashes: joinHashes(objects.map((o) => o.hash)) }),
  );
  if (have.some((h) => h !== 1)) throw new Error("probe missed an uploaded object");
  await measure("hello (known host, nothing new)", 0, () =>
    http.call("hello", { version: PROTOCOL_VERSION, hostId, hostRev: 2 * FILES, capabilities: [] }),
  );

  const inline = objects.map((o) => ({ hash: sha(o.bytes.subarray(1)), bytes: o.bytes.subarray(1) }));
  const inlineFiles: Entry[] = inline.map((o, i) => ({
    kind: "file",
    path: `inline-${String(i).padStart(5, "0")}.js`,
    mode: 0o644,
    mtime: 1_700_000_000_000,
    size: o.bytes.length,
    chunks: [o.hash],
  }));
  await measure(`push ${FILES} new files, objects inline`, FILES, () =>
    http.call("push", {
      hostId,
      start: same.end,
      end: { rev: 3 * FILES, path: null },
      entries: inlineFiles.map((f) => pushEntryOf(f)),
      objects: inline.slice(0, LIMITS.maxObjects),
    }),
  );
  const gone: PushEntry[] = files.map((f) => ({ kind: "gone", path: f.path }));
  await measure(`push deleting ${FILES} files`, FILES, () =>
    http.call("push", {
      hostId,
      start: { rev: 3 * FILES, path: null },
      end: { rev: 4 * FILES, path: null },
      entries: gone,
      objects: [],
    }),
  );
  return steps;
}

await runSession(session, async () => {
  if (FILES > LIMITS.maxObjects || FILES > LIMITS.maxPageEntries) {
    throw new Error(`--files at most ${Math.min(LIMITS.maxObjects, LIMITS.maxPageEntries)} (one upload, one page)`);
  }
  const server = await session.startServer();
  const runs: Step[][] = [];
  for (const seed of [1, 2]) {
    const http = new FerryHttp(server.url, `bench-rows-${seed}`, server.token());
    runs.push(await scenario(http, seed));
  }
  const [a, b] = runs as [Step[], Step[]];
  const counted = a.every((s) => s.rows !== null);
  const flapping = a.filter((s, i) => JSON.stringify(s.rows) !== JSON.stringify(b[i]?.rows)).map((s) => s.op);

  const perFile = (s: Step | undefined) => (s?.rows ? s.rows.rowsWritten / FILES : Number.NaN);
  const upload = a.find((s) => s.op.startsWith("upload"));
  const push = a.find((s) => s.op.startsWith(`push ${FILES} new one-chunk`));
  const inline = a.find((s) => s.op.includes("inline"));
  const resend = a.find((s) => s.op.startsWith("re-send"));
  const unchanged = a.find((s) => s.op.startsWith("new pack, same"));
  const writtenPerFile = perFile(upload) + perFile(push);
  // What any pack writes whatever it carries (the host's acked cursor), measured by the unchanged pack.
  const perPack = unchanged?.rows?.rowsWritten ?? 0;
  // Rows the upload writes beyond one index row per object: the packs holding the bytes (one per MiB, packs.ts).
  const packRows = Math.max(0, (upload?.rows?.rowsWritten ?? 0) - FILES);
  const marginalPerFile =
    ((upload?.rows?.rowsWritten ?? 0) + (push?.rows?.rowsWritten ?? 0) - perPack - packRows) / FILES;

  const table = markdownTable(
    ["operation", "SQL statements", "rows read", "rows written", "written per entry", "ms (one run)"],
    a.map((s) => [
      s.op,
      s.rows?.statements ?? "n/a",
      s.rows?.rowsRead.toLocaleString("en-US") ?? "n/a",
      s.rows?.rowsWritten.toLocaleString("en-US") ?? "n/a",
      s.entries > 0 && s.rows ? fmt(s.rows.rowsWritten / s.entries) : "",
      fmt(s.ms),
    ]),
  );
  const bars = counted
    ? [
        `Bar: rows written per new small file at most 3 — upload ${upload?.rows?.rowsWritten} + push ${push?.rows?.rowsWritten} rows for ${FILES} files = ${fmt(writtenPerFile, 3)} per file, that is ${fmt(marginalPerFile, 2)} per file plus ${perPack} per pack and ${packRows} pack row(s) holding the new bytes (objects inline: ${inline?.rows?.rowsWritten} rows): ${marginalPerFile <= 3 ? "met" : "MISSED"}${packRows > 0 ? ", counting pack rows (one per MiB of new bytes) with the per-pack costs" : ""}.`,
        `Bar: a re-push of unchanged state writes no rows — re-sent pack ${resend?.rows?.rowsWritten}, new pack of unchanged entries ${unchanged?.rows?.rowsWritten}: ${resend?.rows?.rowsWritten === 0 && unchanged?.rows?.rowsWritten === 0 ? "met" : resend?.rows?.rowsWritten === 0 ? "met for the re-sent pack; see the new pack's row" : "MISSED"}.`,
        flapping.length === 0
          ? "Counts identical in two fresh workspaces."
          : `Counts DIFFER between two runs: ${flapping.join(", ")}.`,
      ]
    : ["The server did not report SQL counts (no x-ferry-rows header): bars not measured."];
  const markdown = `${table}\n\n${bars.join("\n")}\n`;
  session.publish(
    {
      files: FILES,
      steps: a,
      secondRun: b,
      writtenPerFile,
      marginalPerFile,
      perPack,
      bars,
    },
    markdown,
  );
  if (flapping.length > 0) process.exitCode = 1;
});
