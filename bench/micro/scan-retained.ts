/**
 * What a first push's scan holds while the push runs: the heap a scan of a
 * tree retains (its changes, in memory until they are stamped and pushed),
 * measured between two forced collections. BENCHMARKS.md section 14
 * (files): the npm tree's scan retained 32.8 MiB before e5c5f50, 25.8 after
 * (a pushed-to array keeps room for 16 more elements; a file's one-chunk
 * lists now keep none).
 *
 *   node --expose-gc --import tsx bench/micro/scan-retained.ts [dir]
 *   (dir: /tmp/ferry-bench-real-tree/node_modules, which bench:push --real-tree makes)
 */
import { IgnoreRules } from "../../client/scan/ignore-rules.ts";
import { Scanner } from "../../client/scan/scanner.ts";
import { openStore } from "../../client/store/sqlite-store.ts";

const root = process.argv[2] ?? "/tmp/ferry-bench-real-tree/node_modules";
const collect = (globalThis as { gc?: () => void }).gc;
if (!collect) throw new Error("run with node --expose-gc --import tsx");
const store = openStore("memory", root);
const scanner = new Scanner(root, store, new IgnoreRules([]));
collect();
const before = process.memoryUsage();
const result = scanner.scan(null, {});
collect();
const after = process.memoryUsage();
const mib = (n: number) => (n / 1024 / 1024).toFixed(1);
console.log(
  `${result.changes.length} changes: heap ${mib(after.heapUsed - before.heapUsed)} MiB, ` +
    `array buffers ${mib(after.arrayBuffers - before.arrayBuffers)} MiB retained`,
);
store.close();
