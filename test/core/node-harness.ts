/**
 * The workspace object's sync path in-process on Node: the operation table
 * behind the object's door (worker/do/door.ts) over NodeSqliteDb, with the
 * schema migrated as the object's constructor does. No Worker, sockets or
 * alarms: those are tested in workerd only.
 */
import { CBOR_CONTENT_TYPE } from "../../protocol/cbor.ts";
import { ID_BYTES } from "../../protocol/hello.ts";
import type { OpName } from "../../protocol/ops.ts";
import type { Rights } from "../../protocol/token.ts";
import { answerOf, run } from "../../worker/do/door.ts";
import { migrate } from "../../worker/do/schema.ts";
import type { SyncContext } from "../../worker/sync/db.ts";
import { readUsage } from "../../worker/sync/gc/usage.ts";
import { MeteredDb } from "../../worker/sync/metered-db.ts";
import { DEFAULT_RETENTION } from "../../worker/sync/retention.ts";
import { readStats } from "../../worker/sync/stats.ts";
import type { CoreWorkspace, Harness } from "./harness.ts";
import { NodeSqliteDb } from "./node-db.ts";

class NodeWorkspace implements CoreWorkspace {
  private readonly ctx: SyncContext & { readonly db: MeteredDb };

  constructor() {
    const db = new MeteredDb(new NodeSqliteDb());
    migrate(db, crypto.getRandomValues(new Uint8Array(ID_BYTES)));
    this.ctx = { db, now: () => Date.now() };
  }

  async serve(op: OpName, body: Uint8Array, rights: Rights): Promise<Response> {
    const result = answerOf(await run(this.ctx, op, { bytes: body }, rights));
    return new Response(result.body, { status: result.status, headers: { "content-type": CBOR_CONTENT_TYPE } });
  }

  /** As the object answers it; wrangler.toml's retention vars are DEFAULT_RETENTION's values. */
  async stats(): Promise<object> {
    return { ...readStats(this.ctx), storage: readUsage(this.ctx, DEFAULT_RETENTION) };
  }

  async withDb<T>(fn: (ctx: SyncContext & { readonly db: MeteredDb }) => T | Promise<T>): Promise<T> {
    return fn(this.ctx);
  }
}

export const NODE_HARNESS: Harness = { name: "node sqlite", fresh: () => new NodeWorkspace() };
