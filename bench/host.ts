/**
 * One host process for the benchmarks: opens a store (on disk under
 * `<root>/.ferry`, or in memory), runs one sync with the client library, and
 * prints one JSON line: what it did (the engine's report), what it cost the
 * server (x-ferry-rows summed over its requests), and when each step happened
 * measured from this process's start (performance.timeOrigin). bench:restore
 * and bench:push start a new one per sample, so every restore is a real
 * process restart with the store reopened from disk.
 *
 * bench/lib/host-process.ts bundles it with esbuild (as the ferry CLI is
 * bundled) so a process starts as fast as the CLI does, not at tsx's pace.
 *
 * It talks to the server through the CLI's own transport (node:http), or
 * with --fetch global through the global fetch, for comparison.
 *
 *   node --import tsx bench/host.ts --root DIR --store disk|memory --op restore|sync|push|pull
 *     --url URL --workspace WS --token TOKEN [--fetch node-http|global]
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { SyncEngine, type SyncOptions } from "../client/engine/sync.ts";
import { openStore, STORE_DIR, STORE_FILE } from "../client/store/sqlite-store.ts";
import { HttpTransport } from "../client/transport/http-transport.ts";
import type { Transport } from "../client/transport/transport.ts";
import { toHex } from "../protocol/hash.ts";
import { RequestTimeline } from "./lib/request-timeline.ts";
import { traceRequests } from "./lib/request-trace.ts";

const loadedAt = performance.now();
const traceFile = process.env.FERRY_BENCH_TRACE;
const writeTrace = traceFile ? traceRequests(traceFile) : null;

/** What each op asks of the engine. `restore` trusts the store for the disk; `sync` rescans it. */
const OPS: Readonly<Record<string, SyncOptions>> = {
  restore: { scan: false },
  sync: {},
  push: { pull: false },
  pull: { push: false },
};

const { values } = parseArgs({
  options: {
    root: { type: "string" },
    store: { type: "string", default: "disk" },
    op: { type: "string", default: "restore" },
    url: { type: "string" },
    workspace: { type: "string" },
    token: { type: "string" },
    // `global`: the transport over the global fetch (undici) instead of its own node:http, for comparison.
    fetch: { type: "string", default: "node-http" },
  },
});
const root = need("root");
const op = OPS[need("op")];
if (op === undefined) throw new Error(`--op: one of ${Object.keys(OPS).join(", ")}`);
const kind = values.store === "memory" ? "memory" : "disk";

const rows = { rowsRead: 0, rowsWritten: 0, statements: 0, counted: 0 };
/** Sums the server's per-request SQL counts (worker/do/rows-header.ts). */
const meter = (header: (name: string) => string | null) => {
  const counts = header("x-ferry-rows");
  if (counts === null) return;
  const [read, written, statements] = counts.split(",").map(Number);
  rows.rowsRead += read ?? 0;
  rows.rowsWritten += written ?? 0;
  rows.statements += statements ?? 0;
  rows.counted++;
};

const storeExisted = kind === "disk" && existsSync(join(root, STORE_DIR, STORE_FILE));
const openAt = performance.now();
const store = openStore(kind, root);
const openedAt = performance.now();
const position = store.position();
const transport = new HttpTransport(
  { url: need("url"), workspace: need("workspace"), token: need("token") },
  {
    onAnswer: meter,
    ...(values.fetch === "global" ? { fetch: (...args: Parameters<typeof fetch>) => fetch(...args) } : {}),
  },
);
// Time per operation, so a slow restore shows whether the wait is the wire or the host.
const calls: Record<string, { n: number; ms: number }> = {};
const timeline = new RequestTimeline();
const timed: Transport = {
  async call(name, req) {
    const t = performance.now();
    const end = timeline.begin();
    try {
      return await transport.call(name, req);
    } finally {
      end();
      const c = calls[name] ?? { n: 0, ms: 0 };
      calls[name] = { n: c.n + 1, ms: c.ms + performance.now() - t };
    }
  },
  listen: (events) => transport.listen(events),
  close: () => transport.close(),
};
const engine = new SyncEngine({ root, store, transport: timed });
const syncAt = performance.now();
const report = await engine.sync(op);
const syncedAt = performance.now();
store.close();
await transport.close();
writeTrace?.();

process.stdout.write(
  `${JSON.stringify({
    pid: process.pid,
    op: values.op,
    fetch: values.fetch,
    store: kind,
    storeExisted,
    hostId: toHex(store.hostId),
    opened: { hostRev: position.hostRev, acked: position.acked, pullRev: position.pull?.cursor.rev ?? null },
    report,
    requests: transport.counters,
    rows,
    calls,
    concurrency: timeline.summary(syncAt, syncedAt),
    cpuMs: (process.cpuUsage().user + process.cpuUsage().system) / 1000,
    ms: {
      loaded: loadedAt,
      openStore: openedAt - openAt,
      /** From store open to in sync: the in-process restore time. */
      inProcess: syncedAt - openAt,
      sinceStart: performance.now(),
    },
  })}\n`,
);

function need(name: "root" | "op" | "url" | "workspace" | "token"): string {
  const v = values[name];
  if (typeof v !== "string" || v === "") throw new Error(`--${name} is required`);
  return v;
}
