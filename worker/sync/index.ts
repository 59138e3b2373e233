/**
 * The operation table the workspace object dispatches through: one plain
 * function per operation over a SyncContext. Expected refusals (a cursor
 * mismatch, missing objects, a conflict) are returned, not thrown.
 */
import type { ProtocolError } from "../../protocol/errors.ts";
import type { OpName, OpRequest, OpResponse } from "../../protocol/ops.ts";
import { changes } from "./changes.ts";
import type { SyncContext } from "./db.ts";
import { has } from "./has.ts";
import { hello } from "./hello.ts";
import { log } from "./log.ts";
import { getObjects, putObjects } from "./objects.ts";
import { push } from "./push.ts";
import { snapshot } from "./snapshot.ts";

export type Outcome<K extends OpName> = OpResponse<K> | ProtocolError;

export type Operation<K extends OpName> = (ctx: SyncContext, req: OpRequest<K>) => Outcome<K> | Promise<Outcome<K>>;

export const OPERATIONS: { readonly [K in OpName]: Operation<K> } = {
  hello,
  has,
  putObjects,
  getObjects,
  push,
  changes,
  log,
  snapshot,
};
