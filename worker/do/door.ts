/**
 * The object's one door: every operation, whether it came over HTTP
 * (workspace.ts serve) or in a socket frame (socket.ts), is run here. Its
 * rights are checked, its body decoded and validated once into a typed
 * request (nothing past this file sees `unknown`), the sync rule called
 * (worker/sync/index.ts), and every refusal or failure mapped to a
 * ProtocolError, into one typed outcome. The transports only frame it:
 * HTTP as a status and body (answerOf), a socket as `{id, body}` or
 * `{id, error}`; pokes are built from it (socket.ts afterRun). It never
 * throws: anything unexpected is a logged `internal`.
 */
import { decodeCbor, encodeCbor } from "../../protocol/cbor.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import { OPS, type OpName, type OpRequest, type OpResponse } from "../../protocol/ops.ts";
import type { Rights } from "../../protocol/token.ts";
import type { SyncContext } from "../sync/db.ts";
import { OPERATIONS, type Outcome as RuleOutcome } from "../sync/index.ts";

/** A request body: its CBOR bytes (HTTP), or the value a socket frame carried, decoded with its frame. */
export type RequestBody = { readonly bytes: Uint8Array } | { readonly value: unknown };

/** An operation answered, its op kept so that its request and response narrow together. */
export type Answered = {
  [K in OpName]: { readonly op: K; readonly request: OpRequest<K>; readonly response: OpResponse<K> };
}[OpName];

/** What running one operation came to: its answer, or the refusal the host hears. */
export type Outcome = Answered | { readonly op: OpName; readonly refusal: ProtocolError };

/**
 * Runs `op` on `body` for a caller holding `rights` (no default: a call
 * that forgot them must not be granted write). A read-only caller may not
 * call an operation that writes, and its hello records no host.
 */
export async function run(ctx: SyncContext, op: OpName, body: RequestBody, rights: Rights): Promise<Outcome> {
  try {
    if (OPS[op].writes && rights !== "rw") {
      return { op, refusal: new ProtocolError("forbidden", "token is read-only") };
    }
    const value = "bytes" in body ? decodeCbor(body.bytes) : body.value;
    return await dispatch({ ...ctx, readOnly: rights !== "rw" }, op, value);
  } catch (e) {
    if (e instanceof ProtocolError) return { op, refusal: e };
    console.error(`workspace ${op} failed`, e);
    return { op, refusal: new ProtocolError("internal", "internal error") };
  }
}

async function dispatch<K extends OpName>(ctx: SyncContext, op: K, value: unknown): Promise<Outcome> {
  const request = OPS[op].decodeRequest(value);
  const call = () => OPERATIONS[op](ctx, request);
  // The first write makes the workspace's storage; a read before it answers as an empty workspace and
  // stores nothing (creation.ts, PROTOCOL.md §7).
  const creation = ctx.creation;
  if (creation !== undefined && !stores(op, request, ctx)) return outcomeOf(op, request, await creation.read(call));
  creation?.create();
  return outcomeOf(op, request, await call());
}

/**
 * Whether the operation may store something: one that writes, or a hello that records its host (from
 * a read-write token, and not a look, PROTOCOL.md §4.1).
 */
function stores<K extends OpName>(op: K, request: OpRequest<K>, ctx: SyncContext): boolean {
  if (OPS[op].writes) return true;
  return op === "hello" && ctx.readOnly !== true && (request as OpRequest<"hello">).look !== true;
}

function outcomeOf<K extends OpName>(op: K, request: OpRequest<K>, outcome: RuleOutcome<K>): Outcome {
  if (outcome instanceof ProtocolError) return { op, refusal: outcome };
  return { op, request, response: outcome } as Answered;
}

/** An encoded HTTP answer: the status and the CBOR body (a response or `{error}`). */
export interface Answer {
  readonly status: number;
  readonly body: Uint8Array;
}

/** The outcome as HTTP carries it. */
export function answerOf(outcome: Outcome): Answer {
  if ("refusal" in outcome) return refuse(outcome.refusal);
  return { status: 200, body: encodeResponse(outcome) };
}

function encodeResponse<K extends OpName>(answered: { readonly op: K; readonly response: OpResponse<K> }): Uint8Array {
  return OPS[answered.op].encodeResponse(answered.response);
}

export function refuse(error: ProtocolError): Answer {
  return { status: error.status, body: encodeCbor(error.toWire()) };
}
