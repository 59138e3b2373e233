import { DurableObject } from "cloudflare:workers";
import { ID_BYTES } from "../../protocol/hello.ts";
import type { OpName } from "../../protocol/ops.ts";
import type { Env } from "../env.ts";
import type { SyncContext } from "../sync/db.ts";
import { readStats } from "../sync/stats.ts";
import { type Answer, answer } from "./answer.ts";
import { metered } from "./rows-header.ts";
import { migrate } from "./schema.ts";
import { DurableObjectDb, MeteredDb } from "./sql-db.ts";

export type { Answer } from "./answer.ts";

/**
 * One workspace: its tree, objects and host positions in this object's
 * SQLite. A thin shell: it decodes at the edge (answer.ts) and calls
 * worker/sync.
 */
export class WorkspaceObject extends DurableObject<Env> {
  /** The storage port, metered since the object started; tests read the meter. */
  readonly db: MeteredDb;
  private readonly sync: SyncContext;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.db = new MeteredDb(new DurableObjectDb(ctx.storage));
    // SQLite calls are synchronous, so the schema is current before any call is delivered.
    migrate(this.db, crypto.getRandomValues(new Uint8Array(ID_BYTES)));
    this.sync = { db: this.db, now: () => Date.now() };
  }

  /**
   * Called by the Worker after auth, content-type and size checks, with the
   * raw CBOR body. Never throws for bad input: every refusal is an Answer.
   */
  async call(op: OpName, body: Uint8Array): Promise<Answer> {
    // Benchmark hook: attaches this call's SQL counts, sent as x-ferry-rows (rows-header.ts).
    return metered(this.db.meter, () => answer(this.sync, op, body));
  }

  /** JSON-able state for `GET /stats`. */
  async stats(): Promise<Record<string, unknown>> {
    return { ...readStats(this.sync) };
  }
}
