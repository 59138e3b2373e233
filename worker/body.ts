import { ProtocolError } from "../protocol/errors.ts";

/**
 * Reads a request body of at most `limit` bytes. A declared Content-Length
 * over the limit is refused before anything is read; a body without one is
 * read until it passes the limit, then refused, so memory stays bounded by
 * the limit whatever the client sends.
 */
export async function readBodyWithin(request: Request, limit: number): Promise<Uint8Array> {
  const tooLarge = () =>
    new ProtocolError("payload_too_large", `body is larger than ${limit} bytes`, { limit, field: "body" });
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw tooLarge();
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw tooLarge();
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
