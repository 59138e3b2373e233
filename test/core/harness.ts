/**
 * The sync core's suite (test/core/suites/) runs on two adapters of the Db
 * port: better-sqlite3 in Node (test/core/node.test.ts, seconds) and Durable
 * Object SQLite in workerd (test/worker/core/, a file per suite). Each runner installs
 * its harness before it declares the suites; tests reach it through
 * freshWorkspace().
 */
import type { OpName } from "../../protocol/ops.ts";
import type { Rights } from "../../protocol/token.ts";
import type { SyncContext } from "../../worker/sync/db.ts";
import type { MeteredDb } from "../../worker/sync/metered-db.ts";

/** What a test drives: one operation's encoded body in, for a caller with `rights`, its answer out; and the stats. */
export interface Served {
  serve(op: OpName, body: Uint8Array, rights: Rights): Promise<Response>;
  stats(): Promise<object>;
}

/** A fresh workspace on one adapter, with direct access to its storage. */
export interface CoreWorkspace extends Served {
  /** Runs `fn` over the workspace's metered storage (inside the object, in workerd). */
  withDb<T>(fn: (ctx: SyncContext & { readonly db: MeteredDb }) => T | Promise<T>): Promise<T>;
}

export interface Harness {
  /** Names the adapter in test titles. */
  readonly name: string;
  fresh(): CoreWorkspace;
}

let current: Harness | undefined;

export function useHarness(harness: Harness): void {
  current = harness;
}

/** A workspace no other test has touched, on the runner's adapter. */
export function freshWorkspace(): CoreWorkspace {
  if (!current) throw new Error("no harness: a runner calls useHarness before declaring the suites");
  return current.fresh();
}
