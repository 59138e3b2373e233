/**
 * The operation table: every operation's name, HTTP route, and the decoders
 * for its request (used by the server's edge) and response (used by the
 * client's transports). HTTP and WebSocket carry the same bodies, so both
 * transports and the object dispatch through this one table.
 */
import { encodeCbor } from "./cbor.ts";
import { CborParts } from "./cbor-parts.ts";
import { type ChangesRequest, type ChangesResponse, decodeChangesRequest, decodeChangesResponse } from "./changes.ts";
import { decodeHasRequest, decodeHasResponse, type HasRequest, type HasResponse } from "./has.ts";
import { decodeHelloRequest, decodeHelloResponse, type HelloRequest, type HelloResponse } from "./hello.ts";
import {
  decodeLogRequest,
  decodeLogResponse,
  decodeSnapshotRequest,
  decodeSnapshotResponse,
  type LogRequest,
  type LogResponse,
  type SnapshotRequest,
  type SnapshotResponse,
} from "./history.ts";
import {
  decodeGetObjectsRequest,
  decodeGetObjectsResponse,
  decodePutObjectsRequest,
  decodePutObjectsResponse,
  type GetObjectsRequest,
  type GetObjectsResponse,
  getObjectsFields,
  type PutObjectsRequest,
  type PutObjectsResponse,
  readGetObjectsAnswer,
  writePutObjectsRequest,
} from "./objects.ts";
import {
  decodePushRequest,
  decodePushResponse,
  type PushRequest,
  type PushResponse,
  pushRequestFields,
  writePushRequest,
} from "./push.ts";

export interface Ops {
  hello: { request: HelloRequest; response: HelloResponse };
  has: { request: HasRequest; response: HasResponse };
  putObjects: { request: PutObjectsRequest; response: PutObjectsResponse };
  getObjects: { request: GetObjectsRequest; response: GetObjectsResponse };
  push: { request: PushRequest; response: PushResponse };
  changes: { request: ChangesRequest; response: ChangesResponse };
  log: { request: LogRequest; response: LogResponse };
  snapshot: { request: SnapshotRequest; response: SnapshotResponse };
}

export type OpName = keyof Ops;
export type OpRequest<K extends OpName> = Ops[K]["request"];
export type OpResponse<K extends OpName> = Ops[K]["response"];

export const OP_NAMES: readonly OpName[] = [
  "hello",
  "has",
  "putObjects",
  "getObjects",
  "push",
  "changes",
  "log",
  "snapshot",
];

/** HTTP: `POST /v1/workspaces/{ws}/{route}`. */
export const OP_ROUTES: { readonly [K in OpName]: string } = {
  hello: "hello",
  has: "has",
  putObjects: "objects",
  getObjects: "objects/get",
  push: "push",
  changes: "changes",
  log: "log",
  snapshot: "snapshot",
};

/** Operations that change stored state: a read-only token may not call them. */
export const WRITE_OPS: ReadonlySet<OpName> = new Set<OpName>(["putObjects", "push"]);

/** A request or answer as a CBOR map, before encoding. */
export type WireMap = Record<string, unknown>;

/**
 * Request bodies as wire maps, for both transports: each op's fields and
 * nothing else. objects/get's hashes are joined into one byte string here,
 * once per call; `has` requests carry theirs joined already.
 */
export const REQUEST_ENCODERS: { readonly [K in OpName]: (req: OpRequest<K>) => WireMap } = {
  hello: (req) => ({ ...req }),
  has: (req) => ({ ...req }),
  putObjects: (req) => ({ ...req }),
  getObjects: getObjectsFields,
  push: pushRequestFields,
  changes: (req) => ({ ...req }),
  log: (req) => ({ ...req }),
  snapshot: (req) => ({ ...req }),
};

export const REQUEST_DECODERS: { readonly [K in OpName]: (value: unknown) => OpRequest<K> } = {
  hello: decodeHelloRequest,
  has: decodeHasRequest,
  putObjects: decodePutObjectsRequest,
  getObjects: decodeGetObjectsRequest,
  push: decodePushRequest,
  changes: decodeChangesRequest,
  log: decodeLogRequest,
  snapshot: decodeSnapshotRequest,
};

export const RESPONSE_DECODERS: { readonly [K in OpName]: (value: unknown) => OpResponse<K> } = {
  hello: decodeHelloResponse,
  has: decodeHasResponse,
  putObjects: decodePutObjectsResponse,
  getObjects: decodeGetObjectsResponse,
  push: decodePushResponse,
  changes: decodeChangesResponse,
  log: decodeLogResponse,
  snapshot: decodeSnapshotResponse,
};

/**
 * An answer read from the buffers it arrived in, for a transport that
 * receives a list (HTTP): an objects/get answer's object bytes stay views
 * of them (objects.ts PartedBlob). Null for any other operation, or an
 * answer not in its shape (an `{error}`): the caller joins the buffers and
 * decodes them with RESPONSE_DECODERS.
 */
export function readResponseParts<K extends OpName>(op: K, parts: readonly Uint8Array[]): OpResponse<K> | null {
  return op === "getObjects" ? (readGetObjectsAnswer(parts) as OpResponse<K> | null) : null;
}

/**
 * A request body as buffers, for a transport that sends a list (HTTP): an
 * upload's chunk bytes are referenced, not copied into one body; every other
 * request is one buffer.
 */
export function encodeRequestBody<K extends OpName>(
  op: K,
  req: OpRequest<K>,
): { readonly parts: Uint8Array[]; readonly byteLength: number } {
  const write = REQUEST_WRITERS[op];
  if (write !== undefined) return write(new CborParts(), req).finish();
  const body = encodeCbor(REQUEST_ENCODERS[op](req));
  return { parts: [body], byteLength: body.byteLength };
}

/**
 * Requests written straight into CborParts rather than built as maps for
 * encodeCbor: an upload (its chunk bytes referenced, not copied) and a push
 * (thousands of entries). Each writes the bytes encodeCbor would.
 */
export const REQUEST_WRITERS: { readonly [K in OpName]?: (w: CborParts, req: OpRequest<K>) => CborParts } = {
  putObjects: writePutObjectsRequest,
  push: writePushRequest,
};

export function isOpName(value: unknown): value is OpName {
  return typeof value === "string" && (OP_NAMES as readonly string[]).includes(value);
}
