/**
 * Garbage collection paced by the request bytes the process has let go of
 * (issue 28). What a request leaves behind (its body, the objects decoding
 * made, an answer's rows and encoding) is garbage that V8 frees only at its
 * next full collection, and V8 paces that by the size of its own heap, not
 * by the native memory the garbage holds: under `npm run bench:hostile-memory`
 * sixteen sockets sending 60,000-chunk pushes left ~215 MB of dead buffers
 * before V8 collected them, and `ferry serve` grew by 284 MiB. So before the
 * process takes in another request, once RECLAIM_AFTER_BYTES have been let
 * go of since the last collection, it collects, while the heap is small
 * (a few ms). And once RECLAIM_AFTER_REQUESTS requests have come: each
 * leaves the runtime's own objects behind (its request, headers, answer),
 * native memory V8 sees as a few bytes of wrapper.
 *
 * Only where the runtime exposes `gc` (`ferry serve` runs workerd with
 * `--expose-gc`, client/serve/runtime-config.ts); elsewhere (Cloudflare,
 * the test pool) this does nothing and V8 paces collection alone.
 */

/**
 * Bytes let go of between collections: two 60,000-chunk pushes. At 16 MiB
 * (half the process budget, inflight.ts) sixteen clients sending such
 * pushes grew workerd by 84 MiB, at 4 MiB by 59 (2 MiB: no lower), and a
 * heavy tree's push took no longer (bench/history/hostile-memory.md).
 */
export const RECLAIM_AFTER_BYTES = 4 * 1024 * 1024;

/**
 * Requests between collections. Sixteen keep-alive clients asking for
 * their health as fast as they could (~11,000 a second, nothing let go of)
 * grew workerd by 141 MiB in 15 s; collecting every 500 requests, by 13,
 * with 2% fewer answered (test/node/serve-memory.test.ts).
 */
export const RECLAIM_AFTER_REQUESTS = 500;

type Collect = (options?: { type: "major"; execution: "sync" }) => void;

let letGo = 0;
let requests = 0;

/** A request came in (HTTP or an upgrade): collects once RECLAIM_AFTER_REQUESTS have. */
export function requestCame(): void {
  if (++requests >= RECLAIM_AFTER_REQUESTS) collect();
}

/** `bytes` of requests or answers are done with: garbage from now on. */
export function letGoOf(bytes: number): void {
  letGo += bytes;
}

/** Collects, when enough has been let go of since the last time and the runtime allows it. */
export function reclaimIfDue(): void {
  if (letGo >= RECLAIM_AFTER_BYTES) collect();
}

function collect(): void {
  // Counted afresh either way: where there is no `gc`, every request past the 500th looked for it again.
  letGo = 0;
  requests = 0;
  const gc = (globalThis as { gc?: Collect }).gc;
  if (typeof gc === "function") gc({ type: "major", execution: "sync" });
}
