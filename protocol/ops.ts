/**
 * The operation table: one entry per operation with everything about it —
 * its HTTP route, whether it writes, the limits its request is held to, how
 * its request is written and read and how its answer is written and read.
 * The names (OpName), the request and answer types, the Worker's routes, the
 * socket's frames (ws.ts), the client's transports and the object's door
 * (worker/do/door.ts) all read this one table. Its wire description is
 * fingerprinted against PROTOCOL.md's version (test/core/wire-fingerprint.test.ts).
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
import type { Limits } from "./limits.ts";
import {
  decodeGetObjectsRequest,
  decodeGetObjectsResponse,
  decodePutObjectsRequest,
  decodePutObjectsResponse,
  encodeGetObjectsResponse,
  type GetObjectsRequest,
  type GetObjectsResponse,
  getObjectsFields,
  type PutObjectsRequest,
  type PutObjectsResponse,
  readGetObjectsAnswer,
  writeGetObjectsResponse,
  writePutObjectsRequest,
} from "./objects.ts";
import {
  decodePushRequest,
  decodePushResponse,
  type PushRequest,
  type PushResponse,
  writePushRequest,
} from "./push.ts";

/** Everything about one operation. */
export interface Operation<Req, Res> {
  /** HTTP: `POST /v1/workspaces/{ws}/{route}`. */
  readonly route: string;
  /** Changes stored state: a read-only token may not call it. */
  readonly writes: boolean;
  /** The advertised limits (hello's `limits`) a request is held to, beside maxBodyBytes and maxBodyItems. */
  readonly limits: readonly (keyof Limits)[];
  /**
   * Writes the request body: the one way it is written, for HTTP (a list of
   * buffers) and inside a socket frame alike.
   */
  readonly writeRequest: (w: CborParts, req: Req) => CborParts;
  /** The server's edge: a decoded body to a typed request, or a thrown ProtocolError. */
  readonly decodeRequest: (value: unknown) => Req;
  /** The answer's body as the object sends it over HTTP. */
  readonly encodeResponse: (res: Res) => Uint8Array;
  /**
   * The same answer written after what `w` holds, large byte strings
   * referenced (cbor-parts.ts), for an op whose answers are mostly bytes:
   * a socket frame is then joined once (ws.ts answerFrameParts).
   */
  readonly writeResponse?: (w: CborParts, res: Res) => CborParts;
  /** The client's edge: a decoded answer body to a typed answer. */
  readonly decodeResponse: (value: unknown) => Res;
  /**
   * An answer read from the buffers it arrived in, for a transport that
   * receives a list (HTTP), or null when it is not in that shape (an
   * `{error}`): objects/get's object bytes stay views of them (objects.ts PartedBlob).
   */
  readonly readResponseParts?: (parts: readonly Uint8Array[]) => Res | null;
}

/**
 * A request encoded whole (encodeCbor), as most are: small, few keys, the
 * request's own fields (or the wire map `fields` makes of it).
 */
function writeWhole<Req>(fields: (req: Req) => unknown = (req) => req): (w: CborParts, req: Req) => CborParts {
  return (w, req) => w.raw(encodeCbor(fields(req)));
}

/** An entry: requests written whole and answers encoded whole unless it says otherwise. */
function op<Req, Res>(
  spec: Omit<Operation<Req, Res>, "writeRequest" | "encodeResponse"> & Partial<Operation<Req, Res>>,
): Operation<Req, Res> {
  return { writeRequest: writeWhole(), encodeResponse: encodeCbor, ...spec };
}

const TABLE = {
  hello: op<HelloRequest, HelloResponse>({
    route: "hello",
    writes: false,
    limits: [],
    decodeRequest: decodeHelloRequest,
    decodeResponse: decodeHelloResponse,
  }),
  has: op<HasRequest, HasResponse>({
    route: "has",
    writes: false,
    limits: ["maxHas"],
    decodeRequest: decodeHasRequest,
    decodeResponse: decodeHasResponse,
  }),
  putObjects: op<PutObjectsRequest, PutObjectsResponse>({
    route: "objects",
    writes: true,
    limits: ["maxObjects", "maxObjectBytes"],
    // The objects' bytes referenced, not copied into one body.
    writeRequest: writePutObjectsRequest,
    decodeRequest: decodePutObjectsRequest,
    decodeResponse: decodePutObjectsResponse,
  }),
  getObjects: op<GetObjectsRequest, GetObjectsResponse>({
    route: "objects/get",
    writes: false,
    limits: ["maxHas", "maxGetBytes"],
    writeRequest: writeWhole(getObjectsFields),
    decodeRequest: decodeGetObjectsRequest,
    // Most bytes the object sends are objects/get answers: written to their exact size (cbor-parts.ts).
    encodeResponse: encodeGetObjectsResponse,
    writeResponse: writeGetObjectsResponse,
    decodeResponse: decodeGetObjectsResponse,
    readResponseParts: readGetObjectsAnswer,
  }),
  push: op<PushRequest, PushResponse>({
    route: "push",
    writes: true,
    limits: ["maxEntries", "maxObjects", "maxObjectBytes", "maxFileChunks"],
    // Thousands of entries, written without a map each.
    writeRequest: writePushRequest,
    decodeRequest: decodePushRequest,
    decodeResponse: decodePushResponse,
  }),
  changes: op<ChangesRequest, ChangesResponse>({
    route: "changes",
    writes: false,
    limits: ["maxPageEntries"],
    decodeRequest: decodeChangesRequest,
    decodeResponse: decodeChangesResponse,
  }),
  log: op<LogRequest, LogResponse>({
    route: "log",
    writes: false,
    limits: [],
    decodeRequest: decodeLogRequest,
    decodeResponse: decodeLogResponse,
  }),
  snapshot: op<SnapshotRequest, SnapshotResponse>({
    route: "snapshot",
    writes: false,
    limits: ["maxPageEntries"],
    decodeRequest: decodeSnapshotRequest,
    decodeResponse: decodeSnapshotResponse,
  }),
};

export type OpName = keyof typeof TABLE;
/** Each operation's request and answer types, read off its entry. */
type Types<T> = T extends Operation<infer Req, infer Res> ? { request: Req; response: Res } : never;
export type OpRequest<K extends OpName> = Types<(typeof TABLE)[K]>["request"];
export type OpResponse<K extends OpName> = Types<(typeof TABLE)[K]>["response"];

/** The table, typed so that `OPS[op]` for a generic `op` keeps its request and answer types. */
export const OPS: { readonly [K in OpName]: Operation<OpRequest<K>, OpResponse<K>> } = TABLE;

export const OP_NAMES = Object.keys(OPS) as readonly OpName[];

export function isOpName(value: unknown): value is OpName {
  return typeof value === "string" && Object.hasOwn(OPS, value);
}

/** The operation a `POST /v1/workspaces/{ws}/{route}` names, if any. */
const OP_BY_ROUTE = new Map<string, OpName>(OP_NAMES.map((op) => [OPS[op].route, op]));

export function opOfRoute(route: string): OpName | undefined {
  return OP_BY_ROUTE.get(route);
}

/** A request body as buffers, for a transport that sends a list (HTTP): an upload's chunk bytes are referenced, not copied. */
export function encodeRequestBody<K extends OpName>(
  op: K,
  req: OpRequest<K>,
): { readonly parts: Uint8Array[]; readonly byteLength: number } {
  return OPS[op].writeRequest(new CborParts(), req).finish();
}

/** A request body in one buffer (tests, benchmarks, the CLI's one-off calls). */
export function encodeRequest<K extends OpName>(op: K, req: OpRequest<K>): Uint8Array {
  return OPS[op].writeRequest(new CborParts(), req).toBytes();
}
