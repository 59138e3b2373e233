/**
 * A request body read and decoded in the Worker, with the limits and
 * refusals the object's own serve applies (worker/do/workspace.ts): the
 * R2 routes (upload-route.ts, download-route.ts) take the body here.
 */
import { decodeCbor } from "../../protocol/cbor.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { OPS, type OpName, type OpRequest } from "../../protocol/ops.ts";
import type { Rights } from "../../protocol/token.ts";
import { bodyDeadlineMs, readBeforeDeadline, readStreamWithin } from "../body.ts";
import type { Reservation } from "../do/worker-budget.ts";
import type { workspaceStub } from "../workspace-stub.ts";

/** One call the Worker answers with the bucket (upload-route.ts, download-route.ts), after the route's auth. */
export interface BucketCall {
  readonly bucket: R2Bucket;
  readonly workspace: string;
  readonly stub: ReturnType<typeof workspaceStub>;
  readonly body: ReadableStream<Uint8Array> | null;
  /** The body's declared length, when it declared one. */
  readonly declared: number | undefined;
  readonly rights: Rights;
  /** What the Worker holds of the process budget for the body (app.ts, worker/do/inflight.ts). */
  readonly reservation?: Reservation;
}

export async function readRequest<K extends OpName>(
  op: K,
  body: ReadableStream<Uint8Array> | null,
  declared: number | undefined,
  reservation?: Reservation,
): Promise<{ readonly bytes: Uint8Array; readonly request: OpRequest<K> }> {
  const bytes = await readBody(op, body, declared, reservation);
  return { bytes, request: OPS[op].decodeRequest(decodeCbor(bytes)) };
}

/** The body's bytes, counted with what decoding them holds (reservation.read) before anything decodes them. */
export async function readBody(
  op: OpName,
  body: ReadableStream<Uint8Array> | null,
  declared: number | undefined,
  reservation?: Reservation,
): Promise<Uint8Array> {
  if (body === null) throw new ProtocolError("bad_request", `${OPS[op].route} needs a body`);
  const bytes = await readBeforeDeadline(
    readStreamWithin(body, LIMITS.maxBodyBytes, declared),
    bodyDeadlineMs(declared, LIMITS.maxBodyBytes),
  );
  reservation?.read(bytes);
  return bytes;
}
