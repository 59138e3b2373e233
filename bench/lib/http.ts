/**
 * A bare HTTP caller for the benchmarks that talk to the server directly
 * (probe, rows, and the server-side check of a push): one POST per operation,
 * bodies built as the client's transports build them (protocol/ops.ts encodeRequest),
 * encoded with the protocol's CBOR module and answers decoded with its
 * response decoders, so what is measured is the wire and the server, not a
 * client library. It counts round trips and bytes, and keeps the SQL counts
 * the server reports in `x-ferry-rows` for the last answer.
 */

import { CBOR_CONTENT_TYPE, decodeCbor } from "../../protocol/cbor.ts";
import { encodeRequest, OPS, type OpName, type OpRequest, type OpResponse } from "../../protocol/ops.ts";

export interface SqlCounts {
  readonly rowsRead: number;
  readonly rowsWritten: number;
  readonly statements: number;
}

export interface CallTiming {
  readonly encodeMs: number;
  /** From sending the request to the last byte of the answer. */
  readonly roundTripMs: number;
  readonly decodeMs: number;
  readonly requestBytes: number;
  readonly responseBytes: number;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`HTTP ${status}: ${JSON.stringify(body, (_k, v) => (v instanceof Uint8Array ? `<${v.length} bytes>` : v))}`);
  }
}

export class FerryHttp {
  roundTrips = 0;
  bytesSent = 0;
  bytesReceived = 0;
  /** SQL counts of the last answer, or null when the server does not report them. */
  lastRows: SqlCounts | null = null;
  lastTiming: CallTiming | null = null;

  constructor(
    readonly url: string,
    readonly workspace: string,
    readonly token: string,
  ) {}

  async call<K extends OpName>(op: K, request: OpRequest<K>): Promise<OpResponse<K>> {
    let t = performance.now();
    const body = encodeRequest(op, request);
    const encodeMs = performance.now() - t;
    t = performance.now();
    const res = await fetch(`${this.url}/v1/workspaces/${this.workspace}/${OPS[op].route}`, {
      method: "POST",
      headers: { "content-type": CBOR_CONTENT_TYPE, authorization: `Bearer ${this.token}` },
      body,
    });
    const bytes = new Uint8Array(await res.arrayBuffer());
    const roundTripMs = performance.now() - t;
    this.roundTrips++;
    this.bytesSent += body.byteLength;
    this.bytesReceived += bytes.byteLength;
    this.lastRows = parseRows(res.headers.get("x-ferry-rows"));
    t = performance.now();
    const value = decodeCbor(bytes);
    if (!res.ok) throw new HttpError(res.status, value);
    const decoded = OPS[op].decodeResponse(value);
    this.lastTiming = {
      encodeMs,
      roundTripMs,
      decodeMs: performance.now() - t,
      requestBytes: body.byteLength,
      responseBytes: bytes.byteLength,
    };
    return decoded;
  }

  /** Posts raw bytes to an operation's route; returns the status (for probing where server time goes). */
  async raw(op: OpName, body: Uint8Array): Promise<number> {
    const res = await fetch(`${this.url}/v1/workspaces/${this.workspace}/${OPS[op].route}`, {
      method: "POST",
      headers: { "content-type": CBOR_CONTENT_TYPE, authorization: `Bearer ${this.token}` },
      body,
    });
    await res.arrayBuffer();
    this.roundTrips++;
    return res.status;
  }

  async stats(): Promise<Record<string, unknown>> {
    const res = await fetch(`${this.url}/v1/workspaces/${this.workspace}/stats`, {
      headers: { authorization: `Bearer ${this.token}` },
    });
    if (!res.ok) throw new HttpError(res.status, await res.text());
    return (await res.json()) as Record<string, unknown>;
  }
}

function parseRows(header: string | null): SqlCounts | null {
  if (header === null) return null;
  const [rowsRead, rowsWritten, statements] = header.split(",").map(Number);
  if (rowsRead === undefined || rowsWritten === undefined || statements === undefined) return null;
  return { rowsRead, rowsWritten, statements };
}
