/**
 * The object's edge: raw CBOR in, an encoded Answer out. The body is
 * decoded and validated here, once, into a typed request; nothing past this
 * file sees `unknown`. It never throws: a refusal becomes its status and
 * `{error}`, and anything unexpected becomes a logged `internal` 500.
 */
import { decodeCbor, encodeCbor } from "../../protocol/cbor.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import { encodeGetObjectsResponse, type GetObjectsResponse } from "../../protocol/objects.ts";
import { isOpName, type OpName, REQUEST_DECODERS } from "../../protocol/ops.ts";
import type { SyncContext } from "../sync/db.ts";
import { OPERATIONS, type Outcome } from "../sync/index.ts";

/** An encoded answer: the HTTP status and the CBOR body (a response or `{error}`). */
export interface Answer {
  readonly status: number;
  readonly body: Uint8Array;
}

export async function answer(ctx: SyncContext, op: string, body: Uint8Array): Promise<Answer> {
  try {
    if (!isOpName(op)) return refuse(new ProtocolError("not_found", `no operation '${String(op)}'`));
    const outcome = await run(ctx, op, body);
    if (outcome instanceof ProtocolError) return refuse(outcome);
    // Most bytes the object sends are objects/get answers: written to their exact size (cbor-parts.ts).
    const encoded = op === "getObjects" ? encodeGetObjectsResponse(outcome as GetObjectsResponse) : encodeCbor(outcome);
    return { status: 200, body: encoded };
  } catch (e) {
    if (e instanceof ProtocolError) return refuse(e);
    console.error(`workspace ${op} failed`, e);
    return refuse(new ProtocolError("internal", "internal error"));
  }
}

function run<K extends OpName>(ctx: SyncContext, op: K, body: Uint8Array): Outcome<K> | Promise<Outcome<K>> {
  const request = REQUEST_DECODERS[op](decodeCbor(body));
  return OPERATIONS[op](ctx, request);
}

export function refuse(error: ProtocolError): Answer {
  return { status: error.status, body: encodeCbor(error.toWire()) };
}
