/**
 * bench:probe — `has` for 1,000, 10,000 and 100,000 hashes, half of them
 * held, over HTTP against a real local server. Reports the time per probe
 * (and where it goes: encoding, the round trip, decoding), the request size,
 * and the SQL statements and rows the server spent (x-ferry-rows). Every
 * answer is checked against what was uploaded before it is recorded.
 *
 * A probe of one hash is the fixed cost of a round trip (proxy, Worker,
 * object), for scale.
 *
 * --breakdown adds, for the largest size, three requests of the same size
 * that the server stops at different depths, to split its CPU time between
 * carrying the body (a body whose first byte is not CBOR: refused before
 * decoding), decoding and validating it (the hash list one byte short of a
 * multiple of 32: refused by validation), and the query with its answer.
 *
 *   npm run bench:probe [-- --sizes 1,1000,10000,100000 --samples 5 --breakdown]
 */
import { createHash } from "node:crypto";
import { encodeCbor } from "../protocol/cbor.ts";
import { joinHashes } from "../protocol/hash.ts";
import { LIMITS } from "../protocol/limits.ts";
import { FerryHttp, type SqlCounts } from "./lib/http.ts";
import { Random } from "./lib/random.ts";
import { markdownTable } from "./lib/results.ts";
import { openSession, parseSizes, runSession } from "./lib/session.ts";
import { fmt, runAlternating, summarize } from "./lib/stats.ts";

const BAR_MS = 300;
const session = openSession("probe", { sizes: { type: "string" }, breakdown: { type: "boolean", default: false } });
const sizes = parseSizes(String(session.values.sizes ?? (session.quick ? "1,1000,10000" : "1,1000,10000,100000")));

interface Sample {
  readonly totalMs: number;
  readonly encodeMs: number;
  readonly roundTripMs: number;
  readonly decodeMs: number;
  readonly requestBytes: number;
  readonly rows: SqlCounts | null;
  /** CPU ms of the object's workerd and of wrangler's proxy workerd during the probe (10 ms ticks). */
  readonly serverCpuMs: number;
  readonly proxyCpuMs: number;
}

await runSession(session, async () => {
  const server = await session.startServer();
  const http = new FerryHttp(server.url, "bench-probe", server.token());
  const rng = new Random(42);
  const max = Math.max(...sizes);
  const sha = (b: Uint8Array) => new Uint8Array(createHash("sha256").update(b).digest());
  const present = Array.from({ length: Math.ceil(max / 2) }, (_, i) => rng.bytes(48 + (i % 17)));
  const absent = Array.from({ length: Math.ceil(max / 2) }, () => sha(rng.bytes(40)));

  session.log(`uploading ${present.length} objects in batches of ${LIMITS.maxObjects}`);
  for (let i = 0; i < present.length; i += LIMITS.maxObjects) {
    const objects = present.slice(i, i + LIMITS.maxObjects).map((bytes) => ({ hash: sha(bytes), bytes }));
    await http.call("putObjects", { objects });
  }
  const presentHashes = present.map(sha);

  const lists = new Map(
    sizes.map((n) => {
      const items = [
        ...presentHashes.slice(0, Math.ceil(n / 2)).map((hash) => ({ hash, held: true })),
        ...absent.slice(0, Math.floor(n / 2)).map((hash) => ({ hash, held: false })),
      ];
      return [n, rng.shuffle(items)];
    }),
  );

  const results = await runAlternating<Sample>(
    sizes.map((n) => ({
      name: String(n),
      run: async () => {
        const items = lists.get(n) ?? [];
        const cpu = server.cpuMs();
        const t = performance.now();
        // Joining is part of the probe's cost: a host builds the list for each request.
        const { have } = await http.call("has", { hashes: joinHashes(items.map((x) => x.hash)) });
        const totalMs = performance.now() - t;
        const cpuAfter = server.cpuMs();
        const wrong = items.findIndex((x, i) => (have[i] === 1) !== x.held);
        if (have.length !== items.length || wrong !== -1) throw new Error(`probe of ${n}: wrong answer at ${wrong}`);
        const timing = http.lastTiming;
        return {
          totalMs,
          encodeMs: timing?.encodeMs ?? 0,
          roundTripMs: timing?.roundTripMs ?? 0,
          decodeMs: timing?.decodeMs ?? 0,
          requestBytes: timing?.requestBytes ?? 0,
          rows: http.lastRows,
          serverCpuMs: cpuAfter.runtime - cpu.runtime,
          proxyCpuMs: cpuAfter.proxy - cpu.proxy,
        };
      },
    })),
    {
      samples: session.samples,
      warmup: session.warmup,
      onSample: (arm, round, s) => session.log(`${arm} hashes, sample ${round}: ${fmt((s as Sample).totalMs)} ms`),
    },
  );

  const rows = sizes.map((n) => {
    const samples = results.get(String(n)) ?? [];
    const total = summarize(samples.map((s) => s.totalMs));
    const counts = samples[0]?.rows ?? null;
    return {
      hashes: n,
      held: Math.ceil(n / 2),
      totalMs: total,
      encodeMs: summarize(samples.map((s) => s.encodeMs)).median,
      roundTripMs: summarize(samples.map((s) => s.roundTripMs)).median,
      decodeMs: summarize(samples.map((s) => s.decodeMs)).median,
      requestBytes: samples[0]?.requestBytes ?? 0,
      serverCpuMs: summarize(samples.map((s) => s.serverCpuMs)).median,
      proxyCpuMs: summarize(samples.map((s) => s.proxyCpuMs)).median,
      statements: counts?.statements ?? null,
      rowsRead: counts?.rowsRead ?? null,
      samples,
    };
  });
  const table = markdownTable(
    [
      "hashes (half held)",
      "median ms",
      "min",
      "max",
      "encode",
      "round trip",
      "decode",
      "server CPU ms: object / proxy",
      "request KiB",
      "SQL statements",
      "rows read",
    ],
    rows.map((r) => [
      r.hashes.toLocaleString("en-US"),
      fmt(r.totalMs.median),
      fmt(r.totalMs.min),
      fmt(r.totalMs.max),
      fmt(r.encodeMs),
      fmt(r.roundTripMs),
      fmt(r.decodeMs),
      `${fmt(r.serverCpuMs, 0)} / ${fmt(r.proxyCpuMs, 0)}`,
      fmt(r.requestBytes / 1024, 0),
      r.statements ?? "n/a",
      r.rowsRead?.toLocaleString("en-US") ?? "n/a",
    ]),
  );
  const breakdown =
    session.values.breakdown === true ? await splitServerTime(server, http, lists.get(max) ?? []) : null;
  const at100k = rows.find((r) => r.hashes === 100_000);
  const bar = at100k
    ? `Bar: probe of 100,000 under ${BAR_MS} ms — median ${fmt(at100k.totalMs.median)} ms: ${at100k.totalMs.median < BAR_MS ? "met" : "MISSED"}.`
    : "Bar: not measured (100,000 not among the sizes).";
  const markdown = `${table}\n\n${bar}\n${breakdown ? `\nWhere the object's CPU goes for a probe of ${max.toLocaleString("en-US")} (medians of ${session.samples}):\n\n${breakdown.table}\n` : ""}`;
  session.publish(
    {
      rows,
      bar,
      breakdown: breakdown?.samples ?? null,
    },
    markdown,
  );
});

/** Three bodies of one size the server stops at different depths; CPU of the object's workerd for each. */
async function splitServerTime(
  server: Awaited<ReturnType<typeof session.startServer>>,
  http: FerryHttp,
  items: readonly { hash: Uint8Array }[],
): Promise<{ table: string; samples: Record<string, { cpuMs: number[]; wallMs: number[] }> }> {
  const hashes = joinHashes(items.map((x) => x.hash));
  const valid = encodeCbor({ hashes });
  const notCbor = new Uint8Array(valid.byteLength).fill(0xff);
  const oneShort = encodeCbor({ hashes: hashes.subarray(1) });
  const bodies: [string, Uint8Array, number][] = [
    ["carry the body (refused: not CBOR)", notCbor, 400],
    ["+ decode and validate (refused: list one byte short)", oneShort, 400],
    ["+ query and answer (the probe)", valid, 200],
  ];
  const samples: Record<string, { cpuMs: number[]; wallMs: number[] }> = {};
  for (let round = -1; round < session.samples; round++) {
    for (const [name, body, status] of bodies) {
      const cpu = server.cpuMs().runtime;
      const t = performance.now();
      const got = await http.raw("has", body);
      const wallMs = performance.now() - t;
      const cpuMs = server.cpuMs().runtime - cpu;
      if (got !== status) throw new Error(`${name}: expected ${status}, got ${got}`);
      if (round < 0) continue;
      const s = samples[name] ?? { cpuMs: [], wallMs: [] };
      s.cpuMs.push(cpuMs);
      s.wallMs.push(wallMs);
      samples[name] = s;
    }
  }
  const table = markdownTable(
    ["request", "object's workerd CPU ms", "round trip ms"],
    bodies.map(([name]) => [
      name,
      fmt(summarize(samples[name]?.cpuMs ?? []).median, 0),
      fmt(summarize(samples[name]?.wallMs ?? []).median),
    ]),
  );
  return { table, samples };
}
