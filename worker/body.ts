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
export async function readStreamWithin(stream: ReadableStream<Uint8Array> | null, limit: number): Promise<Uint8Array> {
  if (stream === null) return new Uint8Array(0);
  const reader = stream.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw tooLarge(limit);
    }
    parts.push(value);
  }
  if (parts.length === 1) return parts[0] as Uint8Array;
  const body = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    body.set(part, offset);
    offset += part.byteLength;
  }
  return body;
}
