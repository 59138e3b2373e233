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
 * The same stream, read `READ_BYTES` at a time (`readAtLeast` reads fewer
 * only at the end of the body); an error or a cancel passes through.
 */
const LARGE_READS_SOURCE = `
// Spliced in by ferry serve (client/serve/r2-large-reads.ts): a put's body in ${READ_BYTES}-byte pieces, not 4 KiB ones.
function ${LARGE_READS}(body) {
  const reader = body.getReader({ mode: "byob" });
  return new ReadableStream({
    async pull(controller) {
      const { value, done } = await reader.readAtLeast(${READ_BYTES}, new Uint8Array(${READ_BYTES}));
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
