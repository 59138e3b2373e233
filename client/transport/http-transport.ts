/**
 * The HTTP transport: each operation is `POST {url}/v1/workspaces/{ws}/{route}`
 * with a CBOR body and a bearer token. Network failures, 429 and 502-504
 * (and `internal`) are retried with backoff and jitter, honouring
 * Retry-After; every other refusal is final and rethrown as a ProtocolError
 * with the server's code and details. Every operation is safe to repeat:
 * push is idempotent on the server, the rest only read or store
 * content-addressed bytes.
 */
import { CBOR_CONTENT_TYPE, decodeCbor } from "../../protocol/cbor.ts";
import { codeOfStatus, decodeWireError, isRetryable, ProtocolError } from "../../protocol/errors.ts";
import { encodeRequestBody, OPS, type OpName, type OpRequest, type OpResponse } from "../../protocol/ops.ts";
import { HttpPoster, type PostAnswer, postAnswer, type RequestBody } from "./http-post.ts";
import { backoffMs, DEFAULT_RETRY, type RetryPolicy, sleep } from "./retry.ts";
import type { Endpoint, ServerEvents, Transport } from "./transport.ts";

export interface HttpTransportOptions {
  readonly retry?: RetryPolicy;
  /** Per-request timeout. */
  readonly timeoutMs?: number;
  /** Send through this `fetch` instead of node:http (the benchmarks compare the two). */
  readonly fetch?: typeof fetch;
  /** Sees each answer's headers (the benchmarks sum the server's `x-ferry-rows` counts). */
  readonly onAnswer?: (header: (name: string) => string | null) => void;
  /** The token for each request, for a caller that mints its own (the CLI); the endpoint's otherwise. */
  readonly token?: () => string;
}

/** Counters a caller may read for reports. */
export interface TransportCounters {
  requests: number;
  retries: number;
  bytesSent: number;
  bytesReceived: number;
}

export class HttpTransport implements Transport {
  readonly counters: TransportCounters = { requests: 0, retries: 0, bytesSent: 0, bytesReceived: 0 };
  private readonly base: string;
  private readonly retry: RetryPolicy;
  private readonly timeoutMs: number;
  private readonly fetchFn: typeof fetch | null;
  private readonly onAnswer: HttpTransportOptions["onAnswer"];
  private readonly token: (() => string) | undefined;
  private readonly poster = new HttpPoster();
  /** Closed: requests in flight were cancelled, and none is sent or retried again. */
  private closed = false;

  constructor(
    private readonly endpoint: Endpoint,
    options: HttpTransportOptions = {},
  ) {
    this.base = `${endpoint.url.replace(/\/+$/, "")}/v1/workspaces/${encodeURIComponent(endpoint.workspace)}/`;
    this.retry = options.retry ?? DEFAULT_RETRY;
    this.timeoutMs = options.timeoutMs ?? 120_000;
    this.fetchFn = options.fetch ?? null;
    this.onAnswer = options.onAnswer;
    this.token = options.token;
  }

  async call<K extends OpName>(op: K, req: OpRequest<K>): Promise<OpResponse<K>> {
    const body = encodeRequestBody(op, req);
    for (let attempt = 1; ; attempt++) {
      if (this.closed) throw new ProtocolError("unavailable", "transport closed");
      let failure: RetryableFailure;
      try {
        return await this.send(op, body);
      } catch (e) {
        if (!(e instanceof RetryableFailure) || attempt >= this.retry.attempts || this.closed) throw unwrap(e);
        failure = e;
      }
      this.counters.retries++;
      await sleep(failure.retryAfterMs ?? backoffMs(this.retry, attempt - 1));
    }
  }

  /** HTTP is request and answer only: the server cannot poke, a watch polls. */
  listen(_events: ServerEvents): { readonly pushes: boolean; stop(): void } {
    return { pushes: false, stop() {} };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.poster.close();
  }

  /** One HTTP exchange: the decoded answer, or a thrown (possibly retryable) error. */
  private async send<K extends OpName>(op: K, body: RequestBody): Promise<OpResponse<K>> {
    this.counters.requests++;
    this.counters.bytesSent += body.byteLength;
    let res: PostAnswer;
    try {
      res = await this.post(this.base + OPS[op].route, body);
    } catch (e) {
      throw new RetryableFailure(
        new ProtocolError("unavailable", `cannot reach ${this.endpoint.url}: ${causeMessage(e)}`),
        null,
      );
    }
    this.counters.bytesReceived += res.byteLength;
    this.onAnswer?.(res.header);
    const isCbor = (res.header("content-type") ?? "").startsWith(CBOR_CONTENT_TYPE);
    if (res.status >= 200 && res.status < 300 && isCbor) {
      const read = OPS[op].readResponseParts?.(res.parts) ?? null;
      if (read !== null) return read;
      const value = decodeCbor(res.bytes());
      const err = decodeWireError(value);
      if (err) throw err;
      return OPS[op].decodeResponse(value);
    }
    const bytes = res.bytes();
    const parsed = isCbor || bytes.length > 0 ? parseError(bytes, isCbor) : null;
    // An answer that is neither CBOR nor ferry's JSON error is not from a ferry
    // server (a web page, another API): say so once, without retrying, unless
    // it is a proxy's "try again" (502-504, 429) in front of one.
    if (parsed === null && !isCbor && !TRANSIENT_STATUS.has(res.status)) {
      throw new NotFerryError(this.endpoint.url, res.status, res.header("content-type"));
    }
    const err = parsed ?? statusError(res.status, bytes);
    if (isRetryable(err.code) || res.status === 502 || res.status === 504) {
      throw new RetryableFailure(err, retryAfterMs(res.header("retry-after"), this.retry.capMs));
    }
    throw err;
  }

  /** node:http by default; a given `fetch` otherwise. */
  private async post(url: string, body: RequestBody): Promise<PostAnswer> {
    const headers = {
      "content-type": CBOR_CONTENT_TYPE,
      authorization: `Bearer ${this.token?.() ?? this.endpoint.token}`,
    };
    if (this.fetchFn === null) return this.poster.post(url, headers, body, this.timeoutMs);
    const res = await this.fetchFn(url, {
      method: "POST",
      headers,
      body: new Blob(body.parts as Uint8Array<ArrayBuffer>[]),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const bytes = new Uint8Array(await res.arrayBuffer());
    return postAnswer(res.status, (name) => res.headers.get(name), [bytes]);
  }
}

/** Statuses a proxy in front of a ferry server answers while it is unreachable: retried, whatever the body. */
const TRANSIENT_STATUS: ReadonlySet<number> = new Set([429, 502, 503, 504]);

/** The server answered, but not as a ferry server does (wrong URL, another service on the port). */
export class NotFerryError extends Error {
  readonly code = "not_ferry";
  constructor(url: string, status: number, contentType: string | null) {
    super(
      `${url} is not a ferry server (it answered HTTP ${status}${contentType ? ` with ${contentType.split(";")[0]}` : ""}, not CBOR)`,
    );
    this.name = "NotFerryError";
  }
}

class RetryableFailure extends Error {
  constructor(
    readonly error: ProtocolError,
    readonly retryAfterMs: number | null,
  ) {
    super(error.message);
  }
}

function unwrap(e: unknown): unknown {
  return e instanceof RetryableFailure ? e.error : e;
}

function parseError(bytes: Uint8Array, isCbor: boolean): ProtocolError | null {
  try {
    return decodeWireError(isCbor ? decodeCbor(bytes) : JSON.parse(new TextDecoder().decode(bytes)));
  } catch {
    return null;
  }
}

function statusError(status: number, bytes: Uint8Array): ProtocolError {
  const text = new TextDecoder().decode(bytes.subarray(0, 200)).trim();
  return new ProtocolError(codeOfStatus(status), `HTTP ${status}${text ? `: ${text}` : ""}`, { status });
}

function retryAfterMs(header: string | null, capMs: number): number | null {
  if (header === null) return null;
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds * 1000, capMs) : null;
}

function causeMessage(e: unknown): string {
  const err = e as { message?: string; cause?: { message?: string; code?: string } };
  return err.cause?.code ?? err.cause?.message ?? err.message ?? String(e);
}
