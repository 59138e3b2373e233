/**
 * What building a first push's pack costs the host, step by step: the heavy
 * tree (bench/heavy-tree, installed by `npm run bench:push -- --heavy-tree`)
 * scanned and stamped into a memory store, then the pending records read, the
 * pack cut, its size estimated, its entries made and its body CBOR-encoded,
 * three times, CPU ms each; the body also as maps through encodeCbor (the
 * push's encoding before writePushRequest), to compare in one run. BENCHMARKS.md section 16 (push.ts `sendPack`:
 * which of these overlap the early upload's last answers).
 *
 *   npx tsx bench/micro/push-pack-phases.ts [TREE]
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { estimateEntryBytes, takePack } from "../../client/engine/pack-size.ts";
import { stampScan } from "../../client/engine/stamp.ts";
import { IgnoreRules } from "../../client/scan/ignore-rules.ts";
import { Scanner } from "../../client/scan/scanner.ts";
import { openStore } from "../../client/store/sqlite-store.ts";
import { encodeCbor } from "../../protocol/cbor.ts";
import { entryFields } from "../../protocol/entry.ts";
import { encodeRequestBody } from "../../protocol/ops.ts";
import { type PushRequest, pushEntryOf } from "../../protocol/push.ts";

const root = process.argv[2] ?? join(tmpdir(), "ferry-bench-heavy-tree", "node_modules");
const store = openStore("memory", root);
const ignore = new IgnoreRules([]);
let since = process.cpuUsage();
const lap = (step: string) => {
  const used = process.cpuUsage(since);
  console.log(`${step.padEnd(10)} ${((used.user + used.system) / 1000).toFixed(0)} ms of CPU`);
  since = process.cpuUsage();
};
stampScan(store, new Scanner(root, store, ignore).scan(null));
lap("scan+stamp");
for (let round = 0; round < 3; round++) {
  const pending = store.pending(0, Number.MAX_SAFE_INTEGER);
  lap("pending");
  const pack = takePack(pending, 12 * 2 ** 20, Number.MAX_SAFE_INTEGER);
  lap("cut");
  const bytes = pack.reduce((n, r) => n + estimateEntryBytes(r), 0);
  lap("estimate");
  const entries = pack.map((r) => pushEntryOf(r.entry, r.serverRev));
  lap("entries");
  const request: PushRequest = {
    hostId: store.hostId,
    start: { rev: 0, path: null },
    end: { rev: pack.length, path: null },
    entries,
    objects: [],
    pulled: 0,
  };
  const body = encodeRequestBody("push", request);
  lap("encode");
  // The same body as maps through encodeCbor, the push's path before writePushRequest (section 17, push).
  const maps = encodeCbor({
    hostId: request.hostId,
    start: request.start,
    end: request.end,
    entries: entries.map((e) => ({ ...entryFields(e), base: e.base })),
    pulled: 0,
  });
  lap("encodeCbor");
  console.log(`${pack.length} entries, estimated ${bytes} bytes, encoded ${body.byteLength} (maps ${maps.byteLength})`);
}
