import { concatBytes } from "../protocol/cbor-parts.ts";
import { ProtocolError } from "../protocol/errors.ts";

function tooLarge(limit: number): ProtocolError {
  return new ProtocolError("payload_too_large", `body is larger than ${limit} bytes`, { limit, field: "body" });
}

/** Refuses a request whose declared Content-Length passes `limit`, before anything is read. */
export function checkDeclaredLength(request: Request, limit: number): void {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit);
}

/**
 * Reads a body stream of at most `limit` bytes: a body without a declared
 * length is read until it passes the limit, then refused, so memory stays
 * bounded by the limit whatever the client sends.
 */
export async function readStreamWithin(
  stream: ReadableStream<Uint8Array> | null,
  limit: number,
  declared?: number,
): Promise<Uint8Array> {
  if (stream === null) return new Uint8Array(0);
  if (declared !== undefined && declared <= limit) return readDeclared(stream, limit);
  const reader = stream.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await readClientBytes(reader);
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw tooLarge(limit);
    }
    parts.push(value);
  }
  return concatBytes(parts);
}

/**
 * A body whose length the client declared (and the runtime's HTTP parser
 * holds it to): read whole by the runtime, in one buffer it allocates,
 * rather than part by part into fresh, zero-filled JS buffers and then
 * copied once more into one (issue 13: a third of the object's ingest CPU
 * was allocation and copies). The limit is checked again for a caller
 * that declared less than it sent.
 */
async function readDeclared(stream: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> {
  let buffer: ArrayBuffer;
  try {
    buffer = await new Response(stream).arrayBuffer();
  } catch (e) {
    throw new ProtocolError("bad_request", `the request body could not be read to its end: ${(e as Error).message}`);
  }
  if (buffer.byteLength > limit) throw tooLarge(limit);
  return new Uint8Array(buffer);
}

/**
 * One read of a request body. A read that fails is the client's doing (it
 * hung up, or sent fewer bytes than its Content-Length said): that is a bad
 * request, not a server fault, and must not be logged or answered as
 * `internal`. readStreamWithin's caller (the object's serve) turns it into a 400.
 */
async function readClientBytes(reader: ReadableStreamDefaultReader<Uint8Array>) {
  try {
    return await reader.read();
  } catch (e) {
    throw new ProtocolError("bad_request", `the request body could not be read to its end: ${(e as Error).message}`);
  }
}
