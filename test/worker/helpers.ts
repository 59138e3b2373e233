/** Shared helpers for the workspace object's workerd tests: the object itself, and the core helpers over it. */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import type { WorkspaceObject } from "../../worker/do/workspace.ts";
import type { Meter } from "../../worker/sync/metered-db.ts";
import { type CoreWorkspace, type Harness, useHarness } from "../core/harness.ts";
import * as core from "../core/helpers.ts";

export {
  blob,
  callRaw,
  dir,
  gone,
  helloRequest,
  ok,
  pushEntryMap,
  randomId,
  refused,
  smallFile,
  stats,
  symlink,
  TestHost,
  withoutRev,
} from "../core/helpers.ts";

export type Workspace = DurableObjectStub<WorkspaceObject>;

/** A workspace no other test has touched. */
export function freshWorkspace(): Workspace {
  return env.WORKSPACE.get(env.WORKSPACE.idFromName(`test-${crypto.randomUUID()}`));
}

/** The object as the core suite drives it: its RPC methods, and its metered storage from inside it. */
export function coreWorkspace(stub: Workspace): CoreWorkspace {
  return {
    serve: (op, body, rights) => stub.serve(op, body, rights),
    stats: () => stub.stats(),
    // Rows read or written here directly: the storage is made first, as by a write (worker/do/creation.ts).
    withDb: (fn) =>
      runInDurableObject(stub, (instance: WorkspaceObject) => {
        instance.creation.create();
        return fn({ db: instance.db, now: Date.now });
      }),
  };
}

const OBJECT_HARNESS: Harness = { name: "durable object sqlite", fresh: () => coreWorkspace(freshWorkspace()) };

/**
 * Declares one of the core suites (test/core/suites/) on Durable Object
 * SQLite: test/worker/core/ has a file per suite, so workerd runs them in
 * parallel isolates as it runs the other test files; Node runs them all in
 * test/core/node.test.ts.
 */
export function onObjectSqlite(suite: () => void): void {
  useHarness(OBJECT_HARNESS);
  suite();
}

/** Runs `fn` and returns the statements and rows the object's storage was billed for meanwhile. */
export function metered(ws: Workspace, fn: () => Promise<unknown>): Promise<Meter> {
  return core.metered(coreWorkspace(ws), fn);
}

/** The identity the workspace gave `rev` (revs.id), as a pull position carries it. */
export function revIdOf(ws: Workspace, rev: number): Promise<Uint8Array> {
  return core.revIdOf(coreWorkspace(ws), rev);
}
