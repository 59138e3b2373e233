/**
 * The object's edge: raw CBOR in, an encoded Answer out. The body is
 * decoded and validated here, once, into a typed request; nothing past this
 * file sees `unknown`. It never throws: a refusal becomes its status and
 * `{error}`, and anything unexpected becomes a logged `internal` 500.
 */
import { decodeCbor, encodeCbor } from "../../protocol/cbor.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import { isOpName, OPS, type OpName } from "../../protocol/ops.ts";
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
    return await run(ctx, op, body);
  } catch (e) {
    if (e instanceof ProtocolError) return refuse(e);
    console.error(`workspace ${op} failed`, e);
    return refuse(new ProtocolError("internal", "internal error"));
  }
}

async function run<K extends OpName>(ctx: SyncContext, op: K, body: Uint8Array): Promise<Answer> {
  const outcome: Outcome<K> = await OPERATIONS[op](ctx, OPS[op].decodeRequest(decodeCbor(body)));
  if (outcome instanceof ProtocolError) return refuse(outcome);
  return { status: 200, body: OPS[op].encodeResponse(outcome) };
}

export function refuse(error: ProtocolError): Answer {
  return { status: error.status, body: encodeCbor(error.toWire()) };
}
