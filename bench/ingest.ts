/**
 * bench:ingest — the object's CPU per MiB to take uploads (`objects`) and to
 * serve them back (`objects/get`), for 1 MiB objects (a pack each) and for
 * small ones (8-64 KiB, packed), the two mixes alternating. One upload or
 * download in flight at a time, so the workerd's CPU time over a step is
 * that step's. Every download is checked against what was uploaded. Then
 * SMALL_REQUESTS empty `objects/get` calls: what one request costs the
 * server whatever it carries (the request path: sockets, Workers, the RPC
 * to the object).
 *
 * Each mix runs against two servers side by side, alternating: `ferry serve`
 * with its R2 bucket (the Worker verifies an upload and writes it to R2 as a
 * pack; the object records the index) and `ferry serve --no-r2` (the object
 * verifies and stores the bytes in its SQLite). Both report the runtime's
 * CPU (one workerd: Worker, object and local R2 share its thread) and the
 * object's own share of it (bench/lib/object-cpu.ts: the CPU inside the
 * spans the object was busy), and the object's database size per MiB.
 *
 * --baseline <git ref> runs a third server, the object as it was at that
 * commit (`git archive` into the run's scratch directory), and alternates
 * its arms with this tree's: a before/after of the object in one run.
 *
 *   npm run bench:ingest [-- --mib 64] [--samples 5] [--baseline main]
 */
import { randomBytes } from "node:crypto";
import { loadavg } from "node:os";
import { join } from "node:path";
import { sha256Sync } from "../client/content/hash.ts";
import { HttpTransport } from "../client/transport/http-transport.ts";
import { LIMITS } from "../protocol/limits.ts";
import type { ObjectBlob } from "../protocol/objects.ts";
import { checkoutAt } from "./lib/checkout.ts";
import { meterObjectCpu } from "./lib/object-cpu.ts";
import { markdownTable, writeResults } from "./lib/results.ts";
import type { BenchServer } from "./lib/server.ts";
import { openSession, runSession } from "./lib/session.ts";
import { type Arm, fmt, runAlternating, summarize } from "./lib/stats.ts";

const session = openSession("ingest", { mib: { type: "string" }, baseline: { type: "string" } });
const MiB = 2 ** 20;
/** Objects per upload request: about the 12 MiB a host fills a body to. */
const BATCH_BYTES = 12 * MiB;
/** Empty requests per sample: enough 10 ms CPU ticks to read a per-request figure from. */
const SMALL_REQUESTS = 200;

interface Sample {
  /** The object's share of uploadCpuMs (bench/lib/object-cpu.ts). */
  readonly uploadObjectCpuMs: number;
  /** The object's SQLite database after the upload (stats' usedBytes). */
  readonly objectDbBytes: number;
  readonly uploadCpuMs: number;
  readonly downloadCpuMs: number;
  readonly uploadMs: number;
  readonly downloadMs: number;
  /** Per empty request. */
  readonly requestCpuMs: number;
  readonly requestMs: number;
}

await runSession(session, async () => {
  const mib = Number(session.values.mib ?? (session.quick ? 16 : 64));
  const current = await session.startServer("r2", { mode: { meterObject: true } });
  const sqlite = await session.startServer("sqlite", { mode: { r2: false, meterObject: true } });
  const baselineRef = session.values.baseline;
  const baseline =
    typeof baselineRef === "string"
      ? await session.startServer("baseline", {
          repoDir: checkoutAt(baselineRef, join(session.tmp, "baseline-source")),
        })
      : null;
  const mixes = {
    "1 MiB objects": objectsOf(mib * MiB, () => MiB),
    "8-64 KiB objects": objectsOf(mib * MiB, (r) => 8192 + Math.floor(r * 56 * 1024)),
  };
  let workspaces = 0;
  const arm = (mix: keyof typeof mixes, server: BenchServer, label: string): Arm<Sample> => ({
    name: `${mix}, ${label}`,
    run: async () => {
      const objects = mixes[mix];
      const token = server.token();
      const workspace = `ingest-${workspaces++}`;
      const transport = new HttpTransport({ url: server.url, workspace, token });
      try {
        const meter = meterObjectCpu(server);
        let t = performance.now();
        for (const batch of batches(objects)) await transport.call("putObjects", { objects: batch });
        const uploadMs = performance.now() - t;
        const upload = await meter();
        const objectDbBytes = await objectDbSize(server, workspace);
        let cpu = server.cpuMs().runtime;
        t = performance.now();
        let queue = objects.map((o) => o.hash);
        let got = 0;
        while (queue.length > 0) {
          const res = await transport.call("getObjects", { hashes: queue, maxBytes: LIMITS.maxGetBytes });
          for (const o of res.objects)
            if (Buffer.compare(sha256Sync(o.bytes), o.hash) !== 0) throw new Error("bad object");
          got += res.objects.length;
          queue = queue.slice(res.objects.length);
        }
        if (got !== objects.length) throw new Error(`downloaded ${got} of ${objects.length} objects`);
        const downloadMs = performance.now() - t;
        const downloadCpuMs = server.cpuMs().runtime - cpu;
        cpu = server.cpuMs().runtime;
        t = performance.now();
        for (let i = 0; i < SMALL_REQUESTS; i++) await transport.call("getObjects", { hashes: [], maxBytes: 1 });
        return {
          uploadObjectCpuMs: upload.objectMs,
          objectDbBytes,
          uploadCpuMs: upload.runtimeMs,
          uploadMs,
          downloadMs,
          downloadCpuMs,
          requestMs: (performance.now() - t) / SMALL_REQUESTS,
          requestCpuMs: (server.cpuMs().runtime - cpu) / SMALL_REQUESTS,
        };
      } finally {
        await transport.close();
      }
    },
  });
  const arms = (["1 MiB objects", "8-64 KiB objects"] as const).flatMap((mix) => [
    arm(mix, current, "R2"),
    arm(mix, sqlite, "SQLite"),
    ...(baseline ? [arm(mix, baseline, "baseline")] : []),
  ]);
  const results = await runAlternating(arms, {
    samples: session.samples,
    warmup: session.warmup,
    onSample: (name, round, s) =>
      session.log(
        `${name} #${round}: up ${fmt((s as Sample).uploadCpuMs)} (object ${fmt((s as Sample).uploadObjectCpuMs)}) / down ${fmt((s as Sample).downloadCpuMs)} CPU ms`,
      ),
  });
  const rows = [...results].map(([name, samples]) => {
    const per = (f: (s: Sample) => number) => summarize(samples.map((s) => f(s) / mib));
    return {
      name,
      uploadObjectCpuMsPerMiB: per((s) => s.uploadObjectCpuMs),
      objectDbBytesPerMiB: per((s) => s.objectDbBytes),
      uploadCpuMsPerMiB: per((s) => s.uploadCpuMs),
      downloadCpuMsPerMiB: per((s) => s.downloadCpuMs),
      uploadMsPerMiB: per((s) => s.uploadMs),
      downloadMsPerMiB: per((s) => s.downloadMs),
      // Per request, not per MiB.
      requestCpuMs: summarize(samples.map((s) => s.requestCpuMs)),
      requestMs: summarize(samples.map((s) => s.requestMs)),
    };
  });
  const range = (s: { median: number; min: number; max: number }) => `${fmt(s.median)} (${fmt(s.min)}–${fmt(s.max)})`;
  const table = markdownTable(
    [
      "",
      "upload: the object's CPU ms/MiB",
      "upload: runtime CPU ms/MiB",
      "object's database KiB/MiB",
      "download: runtime CPU ms/MiB",
      "upload wall ms/MiB",
      "download wall ms/MiB",
      "empty request: server CPU ms",
      "empty request: wall ms",
    ],
    rows.map((r) => [
      r.name,
      range(r.uploadObjectCpuMsPerMiB),
      range(r.uploadCpuMsPerMiB),
      fmt(r.objectDbBytesPerMiB.median / 1024),
      range(r.downloadCpuMsPerMiB),
      range(r.uploadMsPerMiB),
      range(r.downloadMsPerMiB),
      range(r.requestCpuMs),
      range(r.requestMs),
    ]),
  );
  const ratio = (mix: string) => {
    const of = (label: string) => rows.find((r) => r.name === `${mix}, ${label}`)?.uploadObjectCpuMsPerMiB.median;
    return fmt((of("R2") ?? Number.NaN) / (of("SQLite") ?? Number.NaN), 2);
  };
  const markdown =
    `${mib} MiB per sample, median (min–max) of ${session.samples}. The object's CPU per MiB with R2 over ` +
    `without: ${ratio("1 MiB objects")} (1 MiB objects), ${ratio("8-64 KiB objects")} (8-64 KiB objects). ` +
    `Load at the start: ${loadAverage()}.\n\n${table}\n`;
  process.stdout.write(`\n${markdown}`);
  session.log(
    `wrote ${writeResults(session.resultName, { bench: "ingest", command: session.command, startedAt: session.startedAt, machine: session.machine, mib, rows }, markdown)}`,
  );
});

/** The object's SQLite database size for `workspace` (GET stats: storage.usedBytes). */
async function objectDbSize(server: BenchServer, workspace: string): Promise<number> {
  const res = await fetch(`${server.url}/v1/workspaces/${workspace}/stats`, {
    headers: { authorization: `Bearer ${server.token()}` },
  });
  if (!res.ok) throw new Error(`stats of ${workspace}: ${res.status}`);
  return ((await res.json()) as { storage: { usedBytes: number } }).storage.usedBytes;
}

/** `uptime`'s three load averages: other work on the machine during the run. */
function loadAverage(): string {
  return loadavg()
    .map((l) => l.toFixed(1))
    .join(", ");
}

/** Random objects of `total` bytes, sized by `size` (given a uniform draw); the same sizes on every run. */
function objectsOf(total: number, size: (r: number) => number): ObjectBlob[] {
  const out: ObjectBlob[] = [];
  let seed = 1;
  for (let bytes = 0; bytes < total; ) {
    seed = (seed * 48271) % 0x7fff_ffff;
    const n = Math.min(size(seed / 0x7fff_ffff), total - bytes);
    const b = new Uint8Array(randomBytes(n));
    out.push({ hash: sha256Sync(b), bytes: b });
    bytes += n;
  }
  return out;
}

function* batches(objects: readonly ObjectBlob[]): Generator<ObjectBlob[]> {
  let batch: ObjectBlob[] = [];
  let bytes = 0;
  for (const o of objects) {
    if (batch.length > 0 && bytes + o.bytes.byteLength > BATCH_BYTES) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(o);
    bytes += o.bytes.byteLength;
  }
  if (batch.length > 0) yield batch;
}
