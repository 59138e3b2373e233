/**
 * One line spliced into Miniflare's R2 object (bucket.worker.js, read from
 * the installed package at each start: local-r2.ts) so that it reads a put's
 * body in large pieces. As shipped, it pipes the body into its digests (MD5,
 * and SHA-256 when asked) and its blob file through a JavaScript
 * TransformStream, and workerd hands such a pipe 4 KiB at a time: each
 * piece costs two awaited digest writes, an enqueue and a write to the disk
 * service, ~20 ms of CPU per MiB, most of a local push's (bench/history/
 * section-20.md). Read with a BYOB reader 256 KiB at a time first, the same
 * bytes reach the same digests and the same blob file in 64 times fewer
 * pieces. Nothing the object checks changes: it computes its digests over
 * every byte, compares them with the put's `sha256`, and applies `onlyIf`
 * as before.
 *
 * If the installed Miniflare no longer has the line (another version),
 * the script runs as shipped: correct, only slower. serve-r2.test.ts fails
 * then, so an upgrade that moves the line is noticed.
 */

/** The expression in bucket.worker.js's put (and multipart part upload) that feeds a body to its digests. */
export const BODY_INTO_DIGESTS = "this.blob.put(value.pipeThrough(digesting))";
const LARGE_READS = "ferryLargeReads";
/** Bytes per read of a put's body: the pieces the digests and the blob write see. */
const READ_BYTES = 256 * 1024;
/**
 * A full collection of the object's isolate before a put, once this many
 * bytes were put since the last: its pieces are garbage once written, and
 * V8, pacing collections by its own small heap, let ~50 MiB of them pile
 * up under sixteen clients uploading 16 MiB bodies (bench:hostile-memory
 * bigbodies: 191 MiB, 137 with a collection before every put). workerd
 * runs with `--expose-gc` (runtime-config.ts), for the Worker's own
 * collections (worker/do/reclaim.ts).
 */
const COLLECT_AFTER_BYTES = 16 * 1024 * 1024;

/**
 * The same stream, read `READ_BYTES` at a time (`readAtLeast` reads fewer
 * only at the end of the body); an error or a cancel passes through.
 */
const LARGE_READS_SOURCE = `
// Spliced in by ferry serve (client/serve/r2-large-reads.ts): a put's body in ${READ_BYTES}-byte pieces, not 4 KiB ones.
let ${LARGE_READS}Since = 0;
function ${LARGE_READS}(body) {
  if (${LARGE_READS}Since >= ${COLLECT_AFTER_BYTES} && typeof globalThis.gc === "function") {
    ${LARGE_READS}Since = 0;
    globalThis.gc();
  }
  const reader = body.getReader({ mode: "byob" });
  return new ReadableStream({
    async pull(controller) {
      const { value, done } = await reader.readAtLeast(${READ_BYTES}, new Uint8Array(${READ_BYTES}));
      ${LARGE_READS}Since += value?.byteLength ?? 0;
      if (value !== undefined && value.byteLength > 0) controller.enqueue(value);
      if (done || value === undefined || value.byteLength < ${READ_BYTES}) controller.close();
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
`;

/** `script` (bucket.worker.js) reading put bodies in large pieces, or as it is if it has no such line. */
export function withLargeReads(script: string): string {
  if (!script.includes(BODY_INTO_DIGESTS)) return script;
  const spliced = BODY_INTO_DIGESTS.replace("value.pipeThrough", `${LARGE_READS}(value).pipeThrough`);
  return `${script.replaceAll(BODY_INTO_DIGESTS, spliced)}${LARGE_READS_SOURCE}`;
}
