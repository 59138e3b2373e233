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
 * bounded by the limit whatever the client sends. With `into` (a buffer of
 * at least `limit` bytes, worker/do/body-buffers.ts), a declared body is
 * read into that buffer; the answer is then a view of it, whose `.buffer` is
 * to be given back once the call is answered.
 */
export async function readStreamWithin(
  stream: ReadableStream<Uint8Array> | null,
  limit: number,
  declared?: number,
  into?: ArrayBuffer,
): Promise<Uint8Array> {
  if (stream === null) return new Uint8Array(0);
  if (declared !== undefined && declared <= limit) {
    const reader = into === undefined ? null : byobReader(stream);
    return reader === null || into === undefined
      ? readDeclared(stream, limit)
      : readInto(reader, into, limit, declared);
  }
  const reader = stream.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await readClientBytes(reader.read());
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

/** A BYOB reader of `stream`, or null for a stream that is not a byte stream (a test's JS stream). */
function byobReader(stream: ReadableStream<Uint8Array>): ReadableStreamBYOBReader | null {
  try {
    return stream.getReader({ mode: "byob" });
  } catch {
    return null;
  }
}

/**
 * Reads a declared body into `buffer` (the object's reused buffers,
 * worker/do/body-buffers.ts): no fresh, zero-filled allocation per request.
 * Each read asks for everything still declared at once (workerd's
 * `readAtLeast`): reads of whatever arrived, ~64 KiB each, cost more in
 * promise turns than the zero-fill they saved (BENCHMARKS.md §14). Each read
 * hands the buffer to the stream and back (BYOB transfers it), so the answer
 * is a view of the buffer as the last read returned it; give that back, not
 * the one passed in. A body that fills `limit` bytes and still has more is
 * refused.
 */
async function readInto(
  reader: ReadableStreamBYOBReader,
  buffer: ArrayBuffer,
  limit: number,
  declared: number,
): Promise<Uint8Array> {
  const end = Math.min(buffer.byteLength, limit);
  let into = buffer;
  let at = 0;
  for (;;) {
    if (at === end) {
      const { done } = await readClientBytes(reader.read(new Uint8Array(1)));
      if (done) break;
      await reader.cancel();
      throw tooLarge(limit);
    }
    const want = Math.max(1, Math.min(declared, end) - at);
    const { done, value } = await readClientBytes(reader.readAtLeast(want, new Uint8Array(into, at, end - at)));
    if (value !== undefined) {
      into = value.buffer as ArrayBuffer;
      at += value.byteLength;
    }
    if (done) break;
  }
  return new Uint8Array(into, 0, at);
}

/**
 * One read of a request body. A read that fails is the client's doing (it
 * hung up, or sent fewer bytes than its Content-Length said): that is a bad
 * request, not a server fault, and must not be logged or answered as
 * `internal`. readStreamWithin's caller (the object's serve) turns it into a 400.
 */
async function readClientBytes<T>(read: Promise<T>): Promise<T> {
  try {
    return await read;
  } catch (e) {
    throw new ProtocolError("bad_request", `the request body could not be read to its end: ${(e as Error).message}`);
  }
}

/**
 * How long a request body may take to arrive: 10 s, and 1 s more for each
 * MiB it declares (or may send): an 8 MiB body has 18 s. A body that
 * stalls half way would otherwise keep what it reserved of the process's
 * budget (worker/do/inflight.ts) for as long as its client keeps the
 * connection open.
 */
export function bodyDeadlineMs(declared: number | undefined, limit: number): number {
  return 10_000 + Math.ceil((declared ?? limit) / (1024 * 1024)) * 1000;
}

/** `read`, or `bad_request` when it has not finished within `ms` (bodyDeadlineMs); the late read is dropped. */
export async function readBeforeDeadline(read: Promise<Uint8Array>, ms: number): Promise<Uint8Array> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new ProtocolError("bad_request", `the request body did not arrive within ${ms} ms`)),
      ms,
    );
  });
  read.catch(() => {}); // a read that loses the race fails later, once the connection ends
  try {
    return await Promise.race([read, late]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/**
 * Reads and drops what is left of a refused request's body, up to `limit`
 * bytes and within bodyDeadlineMs, before its refusal is sent. Answered with
 * its body unread, a client still sending it often saw the connection
 * reset instead of the answer: the runtime closes a connection whose request
 * body it has not read, under the client's upload (a `401` to a 4 MiB
 * upload with a bad token reached the client 5-12 times in 20 through
 * `ferry serve`). A body past `limit`, or one not done by its deadline, is
 * left as before.
 */
export async function dropBody(request: Request, limit: number): Promise<void> {
  const body = request.body;
  if (body === null || request.bodyUsed) return;
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > limit) return;
  const reader = body.getReader();
  const read = (async () => {
    let seen = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      seen += value.byteLength;
      if (seen > limit) throw new Error("past the limit");
    }
  })();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, bodyDeadlineMs(Number.isFinite(declared) ? declared : undefined, limit));
  });
  try {
    await Promise.race([read, late]);
  } catch {
    // cut short, or past the limit: answered as it is
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    read.catch(() => {});
  }
}
