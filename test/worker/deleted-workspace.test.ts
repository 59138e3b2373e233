/**
 * A deleted workspace is not pushed back (worker/sync/deleted-histories.ts,
 * PROTOCOL.md §4.1, §7.10): hello refuses a position in a history the
 * workspace deleted with `workspace_deleted`, recording nothing, unless the
 * host says it recreates the workspace; hosts with no position, or one in a
 * history the server never had, are served as before.
 */
import { describe, expect, it } from "vitest";
import { toHex } from "../../protocol/hash.ts";
import {
  freshWorkspace,
  helloRequest,
  ok,
  randomId,
  refused,
  revIdOf,
  smallFile,
  stats,
  TestHost,
  type Workspace,
} from "./helpers.ts";

/** A host pushes one file into `ws`, which is then deleted: the host, and the pull position it saved before. */
async function pushThenDelete(ws: Workspace, path: string): Promise<{ host: TestHost; pull: Record<string, unknown> }> {
  const host = new TestHost(ws);
  const { epoch } = await ok(ws, "hello", helloRequest(host.id));
  const file = await smallFile(path, `bytes of ${path}`);
  await host.push([file.entry], [file.object]);
  const pull = { epoch, cursor: { rev: 1, path: null }, revId: await revIdOf(ws, 1) };
  await ws.deleteWorkspace();
  return { host, pull };
}

async function deletedAfterOnePush(): Promise<{ ws: Workspace; host: TestHost; pull: Record<string, unknown> }> {
  const ws = freshWorkspace();
  return { ws, ...(await pushThenDelete(ws, "notes.txt")) };
}

describe("hello after the workspace was deleted", () => {
  it("refuses a position in the deleted history with workspace_deleted, and records nothing", async () => {
    const before = Date.now();
    const { ws, host, pull } = await deletedAfterOnePush();
    const { status, error } = await refused(ws, "hello", helloRequest(host.id, { hostRev: 1, pull, label: "a" }));
    expect(status).toBe(410);
    expect(error.code).toBe("workspace_deleted");
    expect(error.deletedAt).toBeGreaterThanOrEqual(before);
    expect(error.deletedAt).toBeLessThanOrEqual(Date.now());
    // A look (status) is told the same.
    const look = await refused(ws, "hello", helloRequest(host.id, { hostRev: 1, pull, look: true }));
    expect(look.error.code).toBe("workspace_deleted");
    expect(await stats(ws)).toMatchObject({ rev: 0, hosts: [] });
  });

  it("answers a host that recreates the workspace as usual: resync into the new history", async () => {
    const { ws, host, pull } = await deletedAfterOnePush();
    const hello = await ok(ws, "hello", helloRequest(host.id, { hostRev: 1, pull, recreate: true }));
    expect(hello).toMatchObject({ rev: 0, resync: true, acked: { rev: 0, path: null } });
    expect(toHex(hello.epoch)).not.toBe(toHex(pull.epoch as Uint8Array));
    const file = await smallFile("notes.txt", "kept here");
    host.acked = hello.acked;
    await host.push([file.entry], [file.object]);
    expect(await stats(ws)).toMatchObject({ rev: 1, files: 1 });
    // In the new history, the host's new position is served as any other.
    const again = await ok(
      ws,
      "hello",
      helloRequest(host.id, { hostRev: 2, pull: { epoch: hello.epoch, cursor: { rev: 0, path: null } } }),
    );
    expect(again.resync).toBe(false);
  });

  it("refuses a host that only pushed (no position) by its id, until it recreates", async () => {
    const { ws, host } = await deletedAfterOnePush();
    const { error } = await refused(ws, "hello", helloRequest(host.id, { hostRev: 1 }));
    expect(error.code).toBe("workspace_deleted");
    expect(await stats(ws)).toMatchObject({ rev: 0, hosts: [] });
    await ok(ws, "hello", helloRequest(host.id, { hostRev: 1, recreate: true }));
    // Heard from in the new history: served as any host from then on.
    expect(await ok(ws, "hello", helloRequest(host.id, { hostRev: 1 }))).toMatchObject({ rev: 0, resync: false });
  });

  it("serves a host with no position as a fresh host: a deleted name can be reused", async () => {
    const { ws } = await deletedAfterOnePush();
    const fresh = new TestHost(ws);
    const hello = await ok(ws, "hello", helloRequest(fresh.id));
    expect(hello).toMatchObject({ rev: 0, resync: false });
    const file = await smallFile("other.txt", "another tree");
    await fresh.push([file.entry], [file.object]);
    expect(await stats(ws)).toMatchObject({ rev: 1, files: 1 });
  });

  it("still resyncs a position in a history it never had (a server wiped or restored)", async () => {
    const { ws, host } = await deletedAfterOnePush();
    const unknown = { epoch: randomId(), cursor: { rev: 1, path: null }, revId: randomId() };
    const hello = await ok(ws, "hello", helloRequest(host.id, { hostRev: 1, pull: unknown }));
    expect(hello).toMatchObject({ rev: 0, resync: true });
  });

  it("remembers every history it deleted, not only the last", async () => {
    const { ws, host, pull } = await deletedAfterOnePush();
    const { host: second, pull: secondPull } = await pushThenDelete(ws, "b.txt");
    for (const [id, position] of [
      [host.id, pull],
      [second.id, secondPull],
    ] as const) {
      const { error } = await refused(ws, "hello", helloRequest(id, { hostRev: 1, pull: position }));
      expect(error.code).toBe("workspace_deleted");
    }
    expect(await stats(ws)).toMatchObject({ rev: 0, hosts: [] });
  });
});
