import { DurableObject } from "cloudflare:workers";
import type { OpName } from "../../protocol/ops.ts";
import type { Env } from "../env.ts";

/** An encoded answer: the HTTP status and the CBOR body (a response or `{error}`). */
export interface Answer {
  readonly status: number;
  readonly body: Uint8Array;
}

/**
 * One workspace: its tree, objects and host positions in this object's
 * SQLite. A thin shell: it decodes at the edge and calls worker/sync.
 */
export class WorkspaceObject extends DurableObject<Env> {
  /**
   * Called by the Worker after auth, content-type and size checks, with the
   * raw CBOR body. Never throws for bad input: every refusal is an Answer.
   */
  async call(op: OpName, body: Uint8Array): Promise<Answer> {
    void op;
    void body;
    throw new Error("not implemented");
  }

  /** JSON-able state for `GET /stats`. */
  async stats(): Promise<Record<string, unknown>> {
    throw new Error("not implemented");
  }
}
